// kill_domain.cpp — kill before reap (D3), guarded.
#include "supervisor/kill_domain.hpp"

#include <signal.h>

namespace courier::supervisor {

void KillDomain::signal_all() {
  // cgroup.kill reaches every member atomically with respect to forks,
  // including a setsid escapee; the group kill reaches descendants that
  // stayed in the process group; the pidfd names the leader exactly.
  if (cgroup_) (void)cgroup_->kill();
  (void)sys::signal_group(leader_, SIGKILL);
  (void)sys::pidfd_signal(pidfd_, SIGKILL);
}

bool KillDomain::kill(StopCause cause) {
  std::lock_guard<std::mutex> lock(mu_);
  if (reaped_.load()) return false;
  int expected = static_cast<int>(StopCause::none);
  const bool first = cause_.compare_exchange_strong(expected, static_cast<int>(cause));
  if (first) {
    kill_ns_.store(sys::mono_now_ns());
    exiting_at_first_kill_.store(sys::is_exiting(leader_, pidfd_));
  }
  signal_all();
  if (first) kill_sent_ns_.store(sys::mono_now_ns());
  return true;
}

Result<sys::ExitStatus> KillDomain::kill_group_and_reap() {
  std::lock_guard<std::mutex> lock(mu_);
  int expected = static_cast<int>(StopCause::none);
  const bool first = cause_.compare_exchange_strong(expected, static_cast<int>(StopCause::leader_exit));
  if (first) kill_ns_.store(sys::mono_now_ns());
  // The leader is a zombie now: its pid, and so its group id, are still ours.
  signal_all();
  if (first) kill_sent_ns_.store(sys::mono_now_ns());
  auto status = sys::reap(pidfd_);
  if (status) reaped_.store(true);
  return status;
}

}  // namespace courier::supervisor
