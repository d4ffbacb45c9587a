// scheduler.hpp — the executor's timekeeper: a thread that expires queued
// deliveries at their deadline (D1) and wakes the workers when a lane lock
// file is closed by another process (a holder there let go).
#pragma once

#include <optional>
#include <thread>

#include "courier/courier.hpp"
#include "sys/events.hpp"

namespace courier::seat {

class Scheduler {
 public:
  // Its wake-up event and expiry timer. Errors: os_error (out of
  // descriptors).
  Result<void> open();
  // Runs on a thread of its own until the executor is stopping and its
  // queue is empty.
  void start(Executor::Impl& exec);
  // Looks at the queue again now (a delivery was queued, or the executor
  // is stopping).
  void wake();
  void join();

 private:
  void run(Executor::Impl& exec);
  // True unless only the wake-up event ended the wait.
  bool wait(Executor::Impl& exec, sys::MonoNs next, bool& poll_failing);

  std::optional<sys::EventFd> wake_;
  std::optional<sys::TimerFd> timer_;
  std::thread thread_;
  // Until when the workers are woken every kSchedulerRetryWait after a lane
  // lock closed elsewhere (kCloseRecheckWindow). The scheduler thread's own.
  sys::MonoNs recheck_until_ = 0;
};

}  // namespace courier::seat
