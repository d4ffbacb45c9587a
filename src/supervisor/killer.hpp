// killer.hpp — the deadline killer (D2): a thread of its own that sleeps on
// a timerfd armed at the kill instant — the absolute deadline, or the
// lane's lease bound when that comes first (L1) — and, when it fires, kills
// the kill domain. A moved lease bound re-arms it. It runs no host code — no
// minter, no authority callback, no progress or log sink — so a
// supervising thread parked in any of those cannot delay the kill.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "courier/result.hpp"
#include "supervisor/kill_domain.hpp"
#include "supervisor/lease_bound.hpp"
#include "sys/events.hpp"

namespace courier::supervisor {

class DeadlineKiller {
 public:
  // Starts the thread. `wake` is signalled after a kill so the supervising
  // loop learns of it. `lease` (may be null: no lease) caps the deadline
  // unless `lease_kill` is false (tests only). Errors: os_error.
  static Result<std::unique_ptr<DeadlineKiller>> start(std::shared_ptr<KillDomain> domain, sys::MonoNs deadline,
                                                       std::shared_ptr<sys::EventFd> wake,
                                                       std::shared_ptr<LeaseBound> lease = nullptr,
                                                       bool lease_kill = true);
  // Cancels (if it has not fired) and joins. Bounded: the thread never
  // blocks on anything but its three descriptors and the domain's mutex.
  ~DeadlineKiller();

  bool fired() const { return fired_.load(); }

 private:
  DeadlineKiller() = default;
  void run();
  sys::MonoNs instant() const { return kill_instant(deadline_, lease_.get(), lease_kill_); }

  std::shared_ptr<KillDomain> domain_;
  std::shared_ptr<sys::EventFd> wake_;
  std::shared_ptr<LeaseBound> lease_;
  sys::MonoNs deadline_ = 0;
  bool lease_kill_ = true;
  sys::TimerFd timer_;
  sys::EventFd cancel_;
  std::shared_ptr<sys::EventFd> moved_;  // the lease bound moved: re-arm
  LeaseListener listener_;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace courier::supervisor
