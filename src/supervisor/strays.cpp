// strays.cpp — orphans reparented to this subreaper: kill, reap, repeat.
#include "supervisor/strays.hpp"

#include <signal.h>

#include <utility>

#include "sys/events.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"

namespace courier::supervisor {

namespace {

// An orphan reparented here: a child of this process that sys::spawn did
// not start (sys::is_own_spawn: not another delivery's child, nor a host
// helper such as `git credential`), started after the delivery's leader. An
// exit signal of 0 marks one of ours too, but /proc cannot be relied on for
// it: on Linux 6.18 it shows SIGCHLD for children cloned with 0.
bool is_stray(pid_t pid, unsigned long long leader_start, unsigned long long& start) {
  auto st = sys::proc_stat(pid);
  if (!st || st->ppid != sys::self_pid() || st->exit_signal == 0 || st->start_ticks < leader_start) return false;
  if (sys::is_own_spawn(pid)) return false;
  start = st->start_ticks;
  return true;
}

}  // namespace

StrayClaim claim_strays(unsigned long long leader_start_ticks, sys::MonoNs until) {
  StrayClaim out;
  for (;;) {
    std::vector<std::pair<pid_t, sys::ScopedFd>> found;
    for (pid_t p : sys::children_of_self()) {
      unsigned long long start = 0;
      if (!is_stray(p, leader_start_ticks, start)) continue;
      auto fd = sys::pidfd_open(p);
      if (!fd) continue;  // reaped meanwhile, by another supervisor or the host
      // The pidfd pins one process; check that it is still the one we read
      // (a pid reaped and reused in between must never be signalled).
      unsigned long long again = 0;
      if (!is_stray(p, leader_start_ticks, again) || again != start) continue;
      (void)sys::pidfd_signal(fd->get(), SIGKILL);
      found.emplace_back(p, std::move(*fd));
    }
    if (found.empty()) return out;
    for (auto& [pid, fd] : found) {
      auto ready = sys::wait_readable_until({fd.get()}, until);
      if (ready && !ready->empty()) {
        // An error here means someone else reaped it first: gone either way.
        (void)sys::reap(fd.get());
      }
      auto st = sys::proc_stat(pid);
      if (st && st->ppid == sys::self_pid()) {
        out.alive.push_back(pid);
      } else {
        out.reaped.push_back(pid);
      }
    }
    // Finite: a process cannot fork once SIGKILL is pending, so each round
    // only uncovers orphans that existed before it.
    if (!out.alive.empty()) return out;
  }
}

}  // namespace courier::supervisor
