// killer.hpp — the deadline killer (D2): a thread of its own that sleeps on
// a timerfd armed at the absolute deadline and, when it fires, kills the
// kill domain. It runs no host code — no minter, no authority callback, no
// progress or log sink — so a supervising thread parked in any of those
// cannot delay the kill.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "courier/result.hpp"
#include "supervisor/kill_domain.hpp"
#include "sys/events.hpp"

namespace courier::supervisor {

class DeadlineKiller {
 public:
  // Starts the thread. `wake` is signalled after a kill so the supervising
  // loop learns of it. Errors: os_error.
  static Result<std::unique_ptr<DeadlineKiller>> start(std::shared_ptr<KillDomain> domain, sys::MonoNs deadline,
                                                       std::shared_ptr<sys::EventFd> wake);
  // Cancels (if it has not fired) and joins. Bounded: the thread never
  // blocks on anything but its two descriptors and the domain's mutex.
  ~DeadlineKiller();

  bool fired() const { return fired_.load(); }

 private:
  DeadlineKiller() = default;
  void run();

  std::shared_ptr<KillDomain> domain_;
  std::shared_ptr<sys::EventFd> wake_;
  sys::TimerFd timer_;
  sys::EventFd cancel_;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace courier::supervisor
