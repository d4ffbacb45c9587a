// kill_domain.hpp — everything a child and its descendants run in: its
// process group (always) and its cgroup (where available), plus the guard
// that makes "never signal a number after reaping it" (D3) hold.
//
// The kill and the reap take the same mutex. A kill checks `reaped_` under
// it; the reap kills the group and then reaps under it. So a pid or pgid is
// only ever signalled while the leader's pid is still held by its zombie (or
// the live process), and no other process can have taken that number.
// Nothing here runs host code or allocates, so a deadline killer thread can
// call kill() however stuck the supervising thread is (D2).
#pragma once

#include <atomic>
#include <mutex>

#include "courier/result.hpp"
#include "sys/cgroup.hpp"
#include "sys/clock.hpp"
#include "sys/spawn.hpp"

namespace courier::supervisor {

// Why the domain was killed first. The supervisor turns it into an outcome.
// lease: the lane's lease bound (L1) passed before the deadline.
// job_refused: the job could not be made ready for this child (an ssh://
// remote's host key unknown, its agent not started): it never got it.
enum class StopCause : int { none, deadline, revoked, protocol_fault, after_result, leader_exit, lease, job_refused };

class KillDomain {
 public:
  // pidfd and cgroup are borrowed; they outlive this object.
  KillDomain(pid_t leader, int pidfd, const sys::Cgroup* cgroup) : leader_(leader), pidfd_(pidfd), cgroup_(cgroup) {}

  // SIGKILL to the whole domain (cgroup.kill, killpg, the leader's pidfd)
  // unless the leader is already reaped. Records the first cause and its
  // time. Returns true if this call sent the signals. Thread-safe.
  bool kill(StopCause cause);

  // The leader has exited (observed without reaping): kill the group, so no
  // member outlives it unseen, then reap. Errors: os_error from waitid
  // (the caller reports wait_failed and retains the seat).
  Result<sys::ExitStatus> kill_group_and_reap();

  bool reaped() const { return reaped_.load(); }
  StopCause first_cause() const { return static_cast<StopCause>(cause_.load()); }
  // Monotonic time of the first kill issued for a cause (0: none yet).
  sys::MonoNs first_kill_ns() const { return kill_ns_.load(); }
  // When that first kill's system calls (cgroup.kill, killpg, pidfd) had
  // all returned (0: not yet).
  sys::MonoNs first_kill_sent_ns() const { return kill_sent_ns_.load(); }
  // The leader was already dying when the first kill was sent (J5): what
  // ended it was not that kill, e.g. a signal from outside whose exit
  // closed its pipes, cutting a frame short, before the kill.
  bool exiting_at_first_kill() const { return exiting_at_first_kill_.load(); }
  pid_t leader() const { return leader_; }

 private:
  void signal_all();  // under mu_, leader not reaped

  const pid_t leader_;
  const int pidfd_;
  const sys::Cgroup* cgroup_;
  std::mutex mu_;
  std::atomic<bool> reaped_{false};
  std::atomic<int> cause_{static_cast<int>(StopCause::none)};
  std::atomic<sys::MonoNs> kill_ns_{0};
  std::atomic<sys::MonoNs> kill_sent_ns_{0};
  std::atomic<bool> exiting_at_first_kill_{false};
};

}  // namespace courier::supervisor
