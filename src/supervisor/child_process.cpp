// child_process.cpp — the child process: spawn plan, spawn, kill domain,
// confirmation of the stop (reaped + EOF on both pipes + cgroup empty).
#include "supervisor/child_process.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <utility>

#include "supervisor/scratch_area.hpp"
#include "supervisor/strays.hpp"
#include "sys/process.hpp"
#include "sys/unix_socket.hpp"

namespace courier::supervisor {

namespace {

std::atomic<std::uint64_t> g_sequence{0};

}  // namespace

Result<std::string> resolve_child_program(const std::string& override_path) {
  if (override_path.empty()) return std::string("/proc/self/exe");
  if (override_path.front() != '/') {
    return fail(Errc::invalid_argument, "child program override must be an absolute path: '" + override_path + "'");
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(override_path, ec)) {
    return fail(Errc::invalid_argument, "child program override is not an existing file: '" + override_path + "'");
  }
  return override_path;
}

std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (auto name : kChildEnvAllowlist) {
    const std::string key(name);
    if (const char* v = std::getenv(key.c_str())) env.push_back(key + "=" + v);
  }
  return env;
}

Result<SpawnPlan> plan_spawn(const SupervisorOptions& opt) {
  auto program = resolve_child_program(opt.child_program);
  if (!program) return tl::unexpected(program.error());
  std::error_code ec;
  std::string argv0 = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (!opt.child_program.empty()) argv0 = opt.child_program;
  if (argv0.empty()) return fail(Errc::os_error, "cannot resolve /proc/self/exe");
  SpawnPlan plan;
  plan.program = std::move(*program);
  plan.argv.push_back(std::move(argv0));
  plan.argv.insert(plan.argv.end(), opt.child_args.begin(), opt.child_args.end());
  plan.warm = opt.warm;
  plan.inherit_fd = opt.warm ? -1 : opt.inherit_fd;  // a warm child gets its lock with the job
  return plan;
}

ChildProcess::ChildProcess(Observed& obs, const CurrentOptions& opts, const sys::Epoll& epoll, Log log)
    : obs_(obs), opts_(opts), epoll_(epoll), log_(std::move(log)) {}

std::string ChildProcess::keep_scratch() {
  keep_scratch_ = true;
  if (!scratch_.empty())
    std::ofstream(scratch_ + "/" + kKeptMarker) << "the stop of this directory's child is unconfirmed\n";
  return scratch_;
}

ChildProcess::~ChildProcess() {
  std::error_code ec;
  if (!scratch_.empty() && !keep_scratch_) std::filesystem::remove_all(scratch_, ec);
}

// The pipes, or for a warm child one Unix socketpair on stdin and stdout
// (so that its lane lock can be passed to it later with the job).
Result<void> ChildProcess::open_stdio(const SpawnPlan& plan) {
  auto timer = sys::TimerFd::create();
  auto in = sys::make_pipe();
  auto outp = sys::make_pipe();
  auto errp = sys::make_pipe();
  auto sock = plan.socket_channel() ? sys::make_socketpair() : Result<std::pair<sys::ScopedFd, sys::ScopedFd>>();
  if (!timer || !in || !outp || !errp || !sock)
    return fail(Errc::os_error, "cannot create the supervisor's descriptors");
  bound_timer_ = std::move(*timer);
  in_ = std::move(*in);
  out_ = std::move(*outp);
  err_ = std::move(*errp);
  if (plan.socket_channel()) sock_ = std::move(*sock);
  return {};
}

// A cgroup of its own when one can be made (CgroupMode::automatic), or
// required; otherwise the process group alone is the kill domain.
Result<void> ChildProcess::make_cgroup() {
  auto parent = sys::Cgroup::find_parent();
  static std::once_flag swept;
  const std::string prefix(sys::kDeliveryCgroupPrefix);
  if (parent) std::call_once(swept, [&] { sys::Cgroup::sweep_stale(*parent, prefix); });
  Result<sys::Cgroup> cg =
      parent
          ? sys::Cgroup::create(*parent, prefix + std::to_string(sys::self_pid()) + "-" + std::to_string(g_sequence++))
          : Result<sys::Cgroup>(tl::unexpected(parent.error()));
  if (cg) {
    cgroup_ = std::move(*cg);
    obs_.out.child.cgroup = true;
  } else if (opt().cgroup == CgroupMode::required) {
    return fail(Errc::os_error, "a cgroup was required and none could be made: " + cg.error().message);
  } else {
    log_("no cgroup for the child, using its process group only: " + cg.error().message);
  }
  return {};
}

Result<void> ChildProcess::prepare(const SpawnPlan& plan) {
  if (auto io = open_stdio(plan); !io) return io;
  if (opt().cgroup != CgroupMode::off) {
    if (auto cg = make_cgroup(); !cg) return cg;
  }
  if (opt().subreaper) {
    // Before the spawn: an orphan made at any moment after it comes to us.
    if (auto on = sys::set_child_subreaper(true); on) {
      subreaping_ = true;
    } else {
      log_("cannot become a child subreaper; the stop is confirmed for the kill domain only: " + on.error().message);
    }
  }
  auto parent = open_scratch_parent();
  auto dir = parent ? make_scratch_dir(*parent) : Result<std::string>(tl::unexpected(parent.error()));
  if (!dir) return fail(dir.error().code, "cannot create a scratch directory: " + dir.error().message);
  scratch_ = std::move(*dir);
  return {};
}

Result<ChildChannel> ChildProcess::spawn(const SpawnPlan& plan) {
  sys::SpawnSpec spec;
  spec.exec_path = plan.program;
  spec.argv = plan.argv;
  spec.env = child_environment();
  spec.stdin_fd = sock_ ? sock_->second.get() : in_->read_end.get();
  spec.stdout_fd = sock_ ? sock_->second.get() : out_->write_end.get();
  spec.stderr_fd = err_->write_end.get();
  spec.inherit_fd = plan.inherit_fd;
  spec.cgroup_dir_fd = cgroup_ ? cgroup_->dir_fd() : -1;
  auto spawned = sys::spawn(spec);
  if (!spawned) return tl::unexpected(spawned.error());
  child_ = std::move(*spawned);
  obs_.out.dispatched = true;
  obs_.out.timings.spawned = sys::mono_now_ns();
  obs_.out.child.pid = child_.pid;
  // Our copies of the child's ends: a descendant may keep the pipes open,
  // but we must not be the one who does.
  in_->read_end.reset();
  out_->write_end.reset();
  err_->write_end.reset();
  ChildChannel ch{std::move(in_->write_end), std::move(out_->read_end), std::move(err_->read_end), false};
  if (sock_) {
    sock_->second.reset();
    auto reader = sys::dup_at_least(sock_->first.get(), 3);
    if (!reader) return tl::unexpected(reader.error());
    ch.from_child = std::move(*reader);
    ch.to_child = std::move(sock_->first);
    ch.socket = true;
  }
  domain_ = std::make_shared<KillDomain>(child_.pid, child_.pidfd.get(), cgroup_ ? &*cgroup_ : nullptr);
  return ch;
}

void ChildProcess::arm_killer(sys::MonoNs deadline, std::shared_ptr<sys::EventFd> wake) {
  auto started =
      DeadlineKiller::start(domain_, deadline, std::move(wake), opt().lease, !opt().lease_kill_disabled_for_tests);
  if (!started) {
    domain_->kill(StopCause::deadline);
    log_("cannot start the deadline killer: " + started.error().message);
  } else {
    killer_ = std::move(*started);
  }
}

bool ChildProcess::watch(std::uint64_t pidfd_tag, std::uint64_t bound_tag, std::uint64_t cgroup_tag) {
  cgroup_tag_ = cgroup_tag;
  return epoll_.add(bound_timer_.fd(), sys::kReadable, bound_tag) &&
         epoll_.add(child_.pidfd.get(), sys::kReadable, pidfd_tag) &&
         (!cgroup_ || epoll_.add(cgroup_->events_fd(), sys::kPriority, cgroup_tag));
}

void ChildProcess::update_bound(sys::MonoNs result_ns) {
  sys::MonoNs at = 0;
  if (domain_->reaped()) {
    at = obs_.out.timings.reaped + opt().eof_bound;
  } else if (domain_->first_kill_ns() != 0) {
    at = domain_->first_kill_ns() + opt().reap_bound;
  } else if (result_ns != 0) {
    at = result_ns + kResultExitGrace;
  }
  if (at != 0 && at != bound_armed_at_) {
    bound_armed_at_ = at;
    (void)bound_timer_.arm_at(at);
  }
}

BoundVerdict ChildProcess::on_bound(bool result) {
  if (!bound_timer_.drain()) return {};
  if (sys::mono_now_ns() < bound_armed_at_) return {};
  BoundFacts f;
  f.child = obs_.out.child;
  f.reaped = domain_->reaped();
  f.killed = domain_->first_kill_ns() != 0;
  f.result = result;
  f.cgroup_path = cgroup_path();
  f.reap_bound = opt().reap_bound;
  f.eof_bound = opt().eof_bound;
  BoundVerdict v = bound_expired(f);
  if (v.action == BoundAction::unconfirmed) obs_.unconfirm(v.unconfirmed.kind, v.unconfirmed.reason);
  return v;
}

bool ChildProcess::on_pidfd() {
  if (domain_->reaped()) return false;
  auto exited = sys::has_exited(child_.pidfd.get());
  if (!exited) {
    obs_.unconfirm(OutcomeKind::wait_failed, "waitid on the child failed: " + exited.error().message);
    return false;
  }
  if (!*exited) return false;
  obs_.out.timings.exited = sys::mono_now_ns();
  // A zombie still has its /proc entry: read its start time before the reap.
  if (auto st = sys::proc_stat(child_.pid)) leader_start_ticks_ = st->start_ticks;
  auto status = domain_->kill_group_and_reap();
  if (!status) {
    obs_.unconfirm(OutcomeKind::wait_failed, "reaping the child failed: " + status.error().message);
    return false;
  }
  obs_.out.timings.reaped = sys::mono_now_ns();
  obs_.out.child.reaped = true;
  claim_orphans();
  if (status->signal)
    obs_.out.child.signal = status->signal;
  else
    obs_.out.child.exit_code = status->code;
  (void)epoll_.remove(child_.pidfd.get());
  return true;
}

void ChildProcess::on_cgroup() {
  auto populated = cgroup_->populated();
  if (!populated) {
    obs_.unconfirm(OutcomeKind::cleanup_unobserved, "reading cgroup.events failed: " + populated.error().message);
    return;
  }
  obs_.out.child.cgroup_empty = !*populated;
  if (obs_.out.child.cgroup_empty && obs_.out.timings.cgroup_empty == 0)
    obs_.out.timings.cgroup_empty = sys::mono_now_ns();
}

void ChildProcess::hold_events() {
  if (!cgroup_ || events_held_) return;
  events_held_ = true;
  (void)epoll_.remove(cgroup_->events_fd());
}

bool ChildProcess::take_back_events() {
  if (!events_held_) return true;
  events_held_ = false;
  return !cgroup_ || epoll_.add(cgroup_->events_fd(), sys::kPriority, cgroup_tag_);
}

void ChildProcess::settle_cgroup() {
  const ChildFacts& c = obs_.out.child;
  if (cgroup_ && !c.cgroup_empty && c.reaped && c.stdout_eof && c.stderr_eof) on_cgroup();
}

bool ChildProcess::confirmed() const { return stop_confirmed(obs_.out.child); }

// After the stop: anyone left in the child's process group who is not a
// zombie? SIGKILL was sent to the group at the leader's exit; wait, on
// their pidfds, until EOF_BOUND for each to go.
void ChildProcess::census() {
  claim_orphans();
  group_census();
}

std::unique_ptr<Leftovers> ChildProcess::take_leftovers() {
  auto left = std::make_unique<Leftovers>();
  left->cgroup = std::move(cgroup_);
  cgroup_.reset();
  if (!keep_scratch_) left->scratch = std::exchange(scratch_, std::string());
  left->log = opt().on_event;
  return left;
}

Leftovers::~Leftovers() {
  if (cgroup) {
    if (auto rm = cgroup->remove(); !rm && log) log("cannot remove the child's cgroup: " + rm.error().message);
  }
  std::error_code ec;
  if (!scratch.empty()) std::filesystem::remove_all(scratch, ec);
}

// Subreaping: a descendant that left the process group and the cgroup
// and closed its pipes (setsid, a write to another cgroup.procs, a double
// fork) is invisible to the kill domain, but once its parent died it is
// our child. Every such orphan is killed and reaped within EOF_BOUND, or
// the stop is not confirmed. Run at the reap (so that an orphan holding a
// pipe dies and its end-of-file comes) and again at the end, for the
// orphans of group members that died after that.
void ChildProcess::claim_orphans() {
  if (!subreaping_) return;
  obs_.out.child.subreaped = true;
  // A stray is signalled only now, after the reap: it gets its own
  // REAP_BOUND to die when EOF_BOUND after the reap is nearly spent.
  const sys::MonoNs until = std::max(obs_.out.timings.reaped + opt().eof_bound, sys::mono_now_ns() + opt().reap_bound);
  const StrayClaim c = claim_strays(leader_start_ticks_, until);
  auto& strays = obs_.out.child.strays;
  strays.insert(strays.end(), c.reaped.begin(), c.reaped.end());
  if (!c.reaped.empty()) {
    log_(std::to_string(c.reaped.size()) + " orphaned descendant(s) of child " + std::to_string(child_.pid) +
         " killed and reaped after it");
  }
  if (!c.alive.empty()) {
    strays.insert(strays.end(), c.alive.begin(), c.alive.end());
    obs_.unconfirm(OutcomeKind::domain_populated,
                   std::to_string(c.alive.size()) +
                       " orphaned descendant(s) of the child still alive EOF_BOUND after the reap (first pid " +
                       std::to_string(c.alive.front()) + ")");
  }
}

void ChildProcess::group_census() {
  // The common case, an empty group, costs one system call; only a group
  // with members left (zombies count) is worth a scan of /proc.
  if (!sys::group_has_members(child_.pid)) return;
  auto& census = obs_.out.child.census;
  for (pid_t p : sys::pids_in_group(child_.pid)) {
    const char st = sys::proc_state(p);
    if (st == 0 || st == 'Z' || st == 'X') continue;
    auto fd = sys::pidfd_open(p);
    if (!fd) continue;  // gone already
    auto ready = sys::wait_readable_until({fd->get()}, obs_.out.timings.reaped + opt().eof_bound);
    if (!ready || ready->empty()) census.push_back(p);
  }
  if (!census.empty()) {
    obs_.unconfirm(
        OutcomeKind::domain_populated,
        std::to_string(census.size()) + " process(es) still alive in the child's process group after the kill");
  }
}

}  // namespace courier::supervisor
