// signals.hpp — SIGINT/SIGTERM/SIGHUP as events, not handlers: the signals are
// blocked in every thread (call before starting any) and read from a
// signalfd by a watcher thread, which hands each one to a callback. No code
// runs in signal context at all.
#pragma once

#include <functional>
#include <memory>
#include <thread>

#include "courier/result.hpp"
#include "sys/events.hpp"
#include "sys/fd.hpp"

namespace courier::sys {

class SignalWatcher {
 public:
  // Sets SIGINT and SIGTERM to their default disposition (undoing a
  // shell's SIG_IGN for background jobs) and watches SIGHUP too unless it is
  // ignored (`nohup`, kept as the user's choice); blocks them in the calling thread
  // (and so in threads it starts later) and starts watching. For programs
  // that own their signals (the CLI), not for library hosts. Errors: os_error.
  static Result<std::unique_ptr<SignalWatcher>> start(std::function<void(int signo)> on_signal);
  ~SignalWatcher();  // stops the thread; the signals stay blocked

 private:
  SignalWatcher() = default;
  ScopedFd sigfd_;
  std::unique_ptr<EventFd> stop_;
  std::function<void(int)> on_signal_;
  std::thread thread_;
};

}  // namespace courier::sys
