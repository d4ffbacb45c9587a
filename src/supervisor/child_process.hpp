// child_process.hpp — the child process: how it is started (the spawn
// plan), where it runs (its cgroup, its scratch directory), its spawn (C1),
// its kill domain and deadline killer (D2, D3), and the confirmation of its
// stop — the leader reaped by us, end-of-file on both of its pipes, its
// cgroup empty, no group member or orphan left alive (S2, S3).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "courier/result.hpp"
#include "supervisor/kill_domain.hpp"
#include "supervisor/killer.hpp"
#include "supervisor/supervisor.hpp"
#include "supervisor/verdict.hpp"
#include "sys/cgroup.hpp"
#include "sys/events.hpp"
#include "sys/io.hpp"
#include "sys/spawn.hpp"

namespace courier::supervisor {

// The options in force: a cold child's from the start; a warm child's
// change once, when it takes its delivery.
using CurrentOptions = std::reference_wrapper<const SupervisorOptions>;

// How the child is started, decided once from the options. A warm child
// differs in two things only: it talks over one Unix socket (so that its
// lane lock can be passed to it later, with the job), and it is spawned
// with no job — no deadline, no killer, no lane lock — until assign().
struct SpawnPlan {
  std::string program;            // what execve opens: /proc/self/exe or the test override
  std::vector<std::string> argv;  // [argv0, SupervisorOptions::child_args...]
  bool warm = false;
  int inherit_fd = -1;  // the lane lock given at the spawn (cold only)

  bool socket_channel() const { return warm; }
  bool job_at_spawn() const { return !warm; }
};

// Resolves the program and argv0 (C1). Errors: invalid_argument (a bad
// override), os_error (/proc/self/exe unresolvable); the message is the
// spawn_failed reason.
Result<SpawnPlan> plan_spawn(const SupervisorOptions& opt);

// The parent's ends of the child's stdio.
// What a confirmed stop leaves behind: the child's cgroup (empty) and its
// scratch directory. Removed when destroyed, which the owner does after the
// seat has been handed on: the next turn does not wait for this one's
// housekeeping, and nothing of the stop's confirmation depends on it.
struct Leftovers {
  std::optional<sys::Cgroup> cgroup;
  std::string scratch;
  std::function<void(std::string_view)> log;
  Leftovers() = default;
  Leftovers(const Leftovers&) = delete;
  Leftovers& operator=(const Leftovers&) = delete;
  ~Leftovers();
};

struct ChildChannel {
  sys::ScopedFd to_child;    // the child's stdin
  sys::ScopedFd from_child;  // the child's stdout
  sys::ScopedFd child_err;   // the child's stderr
  bool socket = false;       // stdin and stdout are one Unix socket
};

class ChildProcess {
 public:
  using Log = std::function<void(const std::string&)>;
  // `obs` records the child's facts and timings and the first failure to
  // confirm; `epoll` is the drive loop's (the pidfd is removed from it at
  // the reap). All outlive this object.
  ChildProcess(Observed& obs, const CurrentOptions& opts, const sys::Epoll& epoll, Log log);
  ~ChildProcess();  // removes the scratch directory
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Stage 1, before the spawn: the stdio pipes (or socketpair) and the
  // bound timer, the cgroup (per CgroupMode), subreaping, the scratch
  // directory. Errors: the spawn_failed reason.
  Result<void> prepare(const SpawnPlan& plan);

  // Stage 2: spawns from the plan and keeps the kill domain. Returns the
  // parent's ends of the child's stdio; ours of the child's ends are
  // closed. Errors: the spawn_failed reason.
  Result<ChildChannel> spawn(const SpawnPlan& plan);

  // Starts the deadline killer (D2), capped by the current options' lease
  // bound (L1); without one the deadline cannot be kept, so the domain is
  // killed at once.
  void arm_killer(sys::MonoNs deadline, std::shared_ptr<sys::EventFd> wake);
  void join_killer() { killer_.reset(); }

  // Registers the pidfd, the bound timer and (cgroup mode) cgroup.events.
  bool watch(std::uint64_t pidfd_tag, std::uint64_t bound_tag, std::uint64_t cgroup_tag);

  // The one timer for bounds: REAP_BOUND after the first kill, EOF_BOUND
  // after the reap, the result grace after a result (`result_ns`, 0: none).
  void update_bound(sys::MonoNs result_ns);
  // The bound timer fired: what it means (verdict.hpp).
  BoundVerdict on_bound(bool result);

  // The pidfd is readable: when the leader has exited, kill the group, then
  // reap (D3), and claim orphans. True when this call reaped it.
  bool on_pidfd();
  // cgroup.events changed: record whether the cgroup is empty.
  void on_cgroup();
  // From our kill until the reap: cgroup.events out of the loop's epoll,
  // and back in (settle_cgroup reads it at once after the reap). False
  // when it could not be watched again.
  void hold_events();
  bool take_back_events();
  // Once reaped and at EOF on both pipes, reads cgroup.events at once: its
  // notifications are rate-limited and may lag the fact.
  void settle_cgroup();
  bool confirmed() const;
  // After the stop: no orphan and no group member left alive, or the stop
  // is not confirmed (domain_populated).
  void census();
  // After a confirmed stop: the empty cgroup and the scratch directory,
  // handed over for removal (this object then removes neither).
  std::unique_ptr<Leftovers> take_leftovers();

  const std::shared_ptr<KillDomain>& domain() const { return domain_; }
  std::int64_t pid() const { return child_.pid; }
  bool has_cgroup() const { return cgroup_.has_value(); }
  std::string cgroup_path() const { return cgroup_ ? cgroup_->path() : std::string(); }
  const std::string& scratch() const { return scratch_; }
  // The stop is unconfirmed: the scratch directory is not removed (the work
  // that may still run keeps its files). Returns its path.
  std::string keep_scratch();

 private:
  Result<void> open_stdio(const SpawnPlan& plan);
  Result<void> make_cgroup();
  void claim_orphans();
  void group_census();
  const SupervisorOptions& opt() const { return opts_.get(); }

  Observed& obs_;
  const CurrentOptions& opts_;
  const sys::Epoll& epoll_;
  Log log_;

  std::optional<sys::Pipe> in_, out_, err_;
  std::optional<std::pair<sys::ScopedFd, sys::ScopedFd>> sock_;
  sys::TimerFd bound_timer_;
  sys::MonoNs bound_armed_at_ = 0;
  std::uint64_t cgroup_tag_ = 0;
  bool events_held_ = false;
  std::optional<sys::Cgroup> cgroup_;
  sys::Spawned child_;
  std::shared_ptr<KillDomain> domain_;
  std::unique_ptr<DeadlineKiller> killer_;
  std::string scratch_;
  bool keep_scratch_ = false;
  // Subreaping: this process is a child subreaper, so the delivery's orphans
  // come back to it; the leader's start time tells them from older children.
  bool subreaping_ = false;
  unsigned long long leader_start_ticks_ = 0;
};

}  // namespace courier::supervisor
