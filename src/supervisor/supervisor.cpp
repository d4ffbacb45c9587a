// supervisor.cpp — the Supervisor: run() in named stages (prepare, spawn,
// watch, drive, decide), revoke() and assign(), and the drive loop that
// joins the child process (child_process.*) to its conversation
// (conversation.*) and hands what it observed to the verdict (verdict.*).
#include "supervisor/supervisor.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "supervisor/child_process.hpp"
#include "supervisor/conversation.hpp"
#include "supervisor/host_calls.hpp"
#include "supervisor/kill_domain.hpp"
#include "supervisor/verdict.hpp"
#include "sys/events.hpp"
#include "sys/process.hpp"

namespace courier::supervisor {

namespace {

std::atomic<std::uint64_t> g_unconfirmed{0};

// Tags of the loop's own descriptors (the conversation has its own).
enum Tag : std::uint64_t { kTagWake = 1, kTagDeadline, kTagBound, kTagPidfd, kTagCgroup };

// The job frame as the child gets it: the host's job, with this process as
// its parent, the turn's deadline (D1) and its scratch directory.
protocol::Job job_for(const SupervisorOptions& opt, const std::string& scratch) {
  protocol::Job job = opt.job;
  job.parent_pid = sys::self_pid();
  job.deadline_mono_ns = opt.deadline;
  job.scratch_dir = scratch;
  if (opt.lease) job.lease_bound_mono_ns = opt.lease->get();
  return job;
}

// The instant the loop's own timer stops the child at (L1).
sys::MonoNs stop_instant(const SupervisorOptions& opt) {
  return kill_instant(opt.deadline, opt.lease.get(), !opt.lease_kill_disabled_for_tests);
}

// The lease's words for a kill at its bound.
constexpr const char* kLeaseLostReason = "the lane's lease was not renewed in time";

}  // namespace

std::uint64_t unconfirmed_children() { return g_unconfirmed.load(); }

// Everything one run of the drive loop owns: the child process, the
// conversation with it, and the descriptors that wake the loop.
struct Supervisor::Loop final : Conversation::Driver {
  Supervisor& sup;
  CurrentOptions optr;
  Observed obs;
  SpawnPlan plan;
  std::shared_ptr<sys::EventFd> wake;
  sys::Epoll epoll;
  sys::TimerFd deadline_timer;
  ChildProcess child;
  std::optional<Conversation> conv;
  // L2: the lease bound the child was last told (0: it has no lease), and
  // the registration that wakes the loop when the bound moves.
  sys::MonoNs lease_told = 0;
  LeaseListener lease_listener;
  // What prepare_job made for this delivery (the agent), released with the
  // loop after the confirmed stop; and why it refused the job.
  std::shared_ptr<void> job_companion;
  std::string job_refused;

  // The host's observers run here, off the loop (D2, S4): the loop only
  // queues, and a host callback that blocks holds nothing of ours.
  HostNotifier notes;

  Loop(Supervisor& s, const SupervisorOptions& o)
      : sup(s), optr(o), child(obs, optr, epoll, [this](const std::string& line) { event(line); }) {}

  // run() returns once the observers have had what was queued for them, or
  // after kObserverDrainBound, never past the D4 instant of a delivery.
  ~Loop() override {
    sys::MonoNs until = sys::mono_now_ns() + kObserverDrainBound;
    if (obs.out.deadline != 0) until = std::min(until, obs.out.deadline + opt().reap_bound + opt().eof_bound);
    (void)notes.drain_until(until);
  }

  const SupervisorOptions& opt() const { return optr.get(); }

  void event(const std::string& line) {
    if (opt().on_event) (void)notes.post([f = opt().on_event, line] { f(line); });
  }

  void spawned_observed() {
    if (opt().on_spawned) (void)notes.post([f = opt().on_spawned, pid = child.pid()] { f(pid); });
  }

  // ---- stopping: kill the domain, then drain to EOF and confirm ----------
  // Until the leader's exit is seen, the loop waits on its pidfd (and the
  // bound timer) alone: the pipes' end-of-file and the cgroup's emptying
  // come from the same dying child a moment earlier, and each wake-up they
  // caused could take the CPU from that child before its exit. At the reap
  // they are watched again and read to EOF; nothing is confirmed unseen,
  // and REAP_BOUND and EOF_BOUND bound the waits as before.
  void stop(StopCause cause, const std::string& why) {
    if (child.domain()->kill(cause)) event("killed child " + std::to_string(child.pid()) + ": " + why);
    conv->resume_stdout();  // drain to EOF whatever the child left behind
    hold_until_reap();
    child.update_bound(conv->result_ns());
  }

  void hold_until_reap() {
    if (child.domain()->reaped()) return;
    conv->hold_pipes();
    child.hold_events();
  }

  // ---- Conversation::Driver ----------------------------------------------
  bool stopping() const override { return child.domain()->first_kill_ns() != 0; }
  void fault_stop(const std::string& why) override { stop(StopCause::protocol_fault, why); }
  void revoke(std::string why) override { sup.revoke(std::move(why), RevokeCause::authority); }
  bool revoked() override { return sup.revocation().revoked; }
  void hello_received() override {
    sup.ready_ = true;
    if (opt().on_ready) opt().on_ready();
  }
  void result_received() override { child.update_bound(conv->result_ns()); }

  // The job as this child gets it, completed by the host's prepare_job.
  // Nullopt: refused, and the child is being stopped without it.
  std::optional<protocol::Job> prepared_job() {
    protocol::Job job = job_for(opt(), child.scratch());
    if (!opt().prepare_job) return job;
    auto held = opt().prepare_job(ChildDomain{child.pid(), child.cgroup_path()}, job);
    if (!held) {
      job_refused = held.error().message;
      stop(StopCause::job_refused, "its job was refused before it was sent: " + job_refused);
      return std::nullopt;
    }
    job_companion = std::move(*held);
    return job;
  }

  // The job goes to the child now: from here a moved lease bound is told to
  // the child (L2) and re-arms the loop's stop timer (L1).
  void job_queued(const protocol::Job& job) {
    if (!opt().lease || !job.lease_bound_mono_ns) return;
    lease_told = *job.lease_bound_mono_ns;
    lease_listener = LeaseListener(opt().lease, [w = wake] { w->signal(); });
    // A move between the job's bound and the listener: not missed.
    if (opt().lease->get() > lease_told) wake->signal();
  }

  void on_lease_moved() {
    if (lease_told == 0) return;
    const sys::MonoNs bound = opt().lease->get();
    if (bound <= lease_told) return;
    lease_told = bound;
    if (!stopping()) conv->queue(protocol::Lease{bound});
    (void)deadline_timer.arm_at(stop_instant(opt()));
  }

  // The loop's stop timer fired: the deadline, or the lease bound before it.
  void on_stop_timer() {
    if (!deadline_timer.drain()) return;
    const sys::MonoNs now = sys::mono_now_ns();
    if (now < stop_instant(opt())) {
      (void)deadline_timer.arm_at(stop_instant(opt()));  // the bound moved later meanwhile
    } else if (kill_is_lease(now, opt().deadline, opt().lease.get(), !opt().lease_kill_disabled_for_tests)) {
      stop(StopCause::lease, std::string(kLeaseLostReason) + " (lease bound reached)");
    } else {
      stop(StopCause::deadline, "deadline reached");
    }
  }

  // ---- events -------------------------------------------------------------
  // Stop decisions first: a revocation, a warm child's assignment, host-call
  // answers.
  void on_wake() {
    wake->drain();
    const Revocation r = sup.revocation();
    obs.out.timings.revoke = r.at;
    if (r.revoked) stop(StopCause::revoked, "revoked: " + r.reason);
    if (stopping()) hold_until_reap();  // the deadline killer's kill, say
    if (!r.revoked && !plan.job_at_spawn() && !obs.out.warm) take_assignment();
    on_lease_moved();
    conv->on_host_answers();
    conv->resume_stdout();
    child.update_bound(conv->result_ns());
  }

  void on_bound() {
    if (child.on_bound(conv->result().has_value()).action == BoundAction::stop_after_result) {
      stop(StopCause::after_result, "it sent its result but did not exit");
    }
  }

  void on_pidfd() {
    if (!child.on_pidfd()) return;
    conv->resume_stdout();
    if (!conv->take_back_pipes() || !child.take_back_events()) {
      obs.unconfirm(OutcomeKind::cleanup_unobserved, "cannot watch the child's pipes again after its reap");
    }
    child.update_bound(conv->result_ns());
  }

  // Warm mode: the job arrived (on the wake eventfd). From here the child is
  // this delivery's: its deadline, its killer, its callbacks, its lane lock.
  void take_assignment() {
    const SupervisorOptions* next = sup.take_assignment();
    if (!next) return;
    optr = *next;
    obs.out.warm = true;
    obs.out.deadline = opt().deadline;
    obs.out.timings.assigned = sys::mono_now_ns();
    child.arm_killer(opt().deadline, wake);
    (void)deadline_timer.arm_at(stop_instant(opt()));
    conv->bind_session(opt().job);
    spawned_observed();
    auto job = prepared_job();
    if (!job) return;
    job_queued(*job);
    conv->queue(*job, opt().inherit_fd);
  }

  // One round of ready descriptors: stop decisions first (revocation, the
  // deadline, the bounds), then the exit, then the pipes.
  void dispatch(const std::vector<sys::Epoll::Ready>& ready) {
    for (const auto& r : ready) {
      if (r.tag == kTagWake) {
        on_wake();
      } else if (r.tag == kTagDeadline) {
        on_stop_timer();
      } else if (r.tag == kTagBound) {
        on_bound();
      }
    }
    for (const auto& r : ready) {
      if (obs.done) break;
      switch (r.tag) {
        case kTagPidfd:
          on_pidfd();
          break;
        case Conversation::kTagStdout:
          if (conv->reading_stdout()) conv->on_stdout();
          break;
        case Conversation::kTagStderr:
          if (conv->reading_stderr()) conv->on_stderr();
          break;
        case Conversation::kTagStdin:
          conv->flush();
          break;
        case kTagCgroup:
          child.on_cgroup();
          break;
        default:
          break;
      }
    }
  }

  // Until the stop is confirmed (then the census), or confirming failed.
  void drive() {
    while (!obs.done) {
      child.settle_cgroup();
      if (child.confirmed()) {
        child.census();
        break;
      }
      auto ready = epoll.wait(-1);
      if (!ready) {
        child.domain()->kill(StopCause::protocol_fault);
        obs.unconfirm(OutcomeKind::cleanup_unobserved, "epoll_wait failed: " + ready.error().message);
        break;
      }
      dispatch(*ready);
    }
  }
};

Supervisor::Supervisor(SupervisorOptions options) : opt_(std::move(options)) {}

Supervisor::~Supervisor() {
  if (running_.load()) {
    std::fprintf(stderr, "git-courier: fatal: Supervisor destroyed while its run() is still supervising child %lld\n",
                 static_cast<long long>(child_pid_.load()));
    std::abort();
  }
}

void Supervisor::tidy() {
  if (!running_.load()) leftovers_.reset();
}

bool Supervisor::assign(SupervisorOptions delivery) {
  std::shared_ptr<void> wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!opt_.warm || revoked_ || finished_ || pending_ || assigned_ || !wake_ || !domain_) return false;
    pending_ = std::move(delivery);
    wake = wake_;
  }
  static_cast<sys::EventFd*>(wake.get())->signal();
  return true;
}

void Supervisor::revoke(std::string reason, RevokeCause cause) {
  std::shared_ptr<KillDomain> domain;
  std::shared_ptr<void> wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!revoked_) {
      revoked_ = true;
      revoke_reason_ = std::move(reason);
      revoke_cause_ = cause;
      revoke_ns_ = sys::mono_now_ns();
    }
    domain = domain_;
    wake = wake_;
  }
  // Kill from this thread at once: it runs no host code and needs no loop.
  if (domain) domain->kill(StopCause::revoked);
  if (wake) static_cast<sys::EventFd*>(wake.get())->signal();
}

Supervisor::Revocation Supervisor::revocation() {
  std::lock_guard<std::mutex> lock(mu_);
  return Revocation{revoked_, revoke_reason_, revoke_ns_, revoke_cause_};
}

const SupervisorOptions* Supervisor::take_assignment() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!pending_) return nullptr;
  assigned_ = std::make_unique<SupervisorOptions>(std::move(*pending_));
  pending_.reset();
  return assigned_.get();
}

// Stage: before the spawn. The loop's descriptors, the child's place to run
// (spawn plan, pipes, cgroup, scratch directory), then the dispatch point:
// a revocation that came first means no child (S5), and a cold child whose
// deadline already passed is not spawned. Returns the outcome when run()
// ends here.
std::optional<Outcome> Supervisor::prepare(Loop& L) {
  auto fail_spawn = [&](const std::string& why) {
    L.obs.out.kind = OutcomeKind::spawn_failed;
    L.obs.out.reason = why;
    return L.obs.out;
  };
  auto plan = plan_spawn(opt_);
  if (!plan) return fail_spawn(plan.error().message);
  L.plan = std::move(*plan);
  auto wake = sys::EventFd::create();
  auto epoll = sys::Epoll::create();
  auto deadline_timer = sys::TimerFd::create();
  if (!wake || !epoll || !deadline_timer) return fail_spawn("cannot create the supervisor's descriptors");
  L.wake = std::make_shared<sys::EventFd>(std::move(*wake));
  L.epoll = std::move(*epoll);
  L.deadline_timer = std::move(*deadline_timer);
  if (auto ready = L.child.prepare(L.plan); !ready) return fail_spawn(ready.error().message);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (revoked_) {
      L.obs.out.kind = OutcomeKind::cancelled_no_dispatch;
      L.obs.out.reason = "revoked before dispatch: " + revoke_reason_;
      L.obs.out.timings.revoke = revoke_ns_;
      L.obs.out.revoke_cause = revoke_reason_;
      L.obs.out.revoked_by = revoke_cause_;
      return L.obs.out;
    }
    wake_ = L.wake;
  }
  if (L.plan.job_at_spawn() && sys::mono_now_ns() >= opt_.deadline) {
    L.obs.out.kind = OutcomeKind::deadline_killed;
    L.obs.out.reason = "the deadline passed before a child was spawned";
    return L.obs.out;
  }
  if (L.plan.job_at_spawn() && sys::mono_now_ns() >= stop_instant(opt_)) {
    L.obs.out.kind = OutcomeKind::revoked;
    L.obs.out.revoke_cause = std::string(kLeaseLostCause);
    L.obs.out.revoked_by = RevokeCause::lease_lost;
    L.obs.out.reason = std::string(kLeaseLostReason) + ": its bound passed before a child was spawned";
    return L.obs.out;
  }
  return std::nullopt;
}

// Stage: the spawn. Publishes the kill domain (so a revocation reaches it
// from now on), starts the deadline killer for a child spawned with its
// job, and registers every descriptor with the loop. A child that cannot be
// watched is killed, and its stop is unconfirmed. Returns the outcome when
// no child came to exist.
std::optional<Outcome> Supervisor::spawn(Loop& L) {
  auto channel = L.child.spawn(L.plan);
  if (!channel) {
    L.obs.out.kind = OutcomeKind::spawn_failed;
    L.obs.out.reason = channel.error().message;
    return L.obs.out;
  }
  child_pid_ = L.child.pid();
  bool revoked_now = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    domain_ = L.child.domain();
    revoked_now = revoked_;
  }
  // A warm child's host learns that it exists too (an early child's waits
  // for that: from then on a job can be assigned to it).
  if (L.plan.job_at_spawn() || L.plan.warm) L.spawned_observed();
  L.event(std::string(L.plan.warm ? "spawned warm child " : "spawned child ") + std::to_string(L.child.pid()) +
          (L.child.has_cgroup() ? " in cgroup " + L.child.cgroup_path() : " (process group only)"));
  if (L.plan.job_at_spawn()) L.child.arm_killer(opt_.deadline, L.wake);
  if (revoked_now) L.child.domain()->kill(StopCause::revoked);
  L.conv.emplace(L, L.obs, L.optr, L.epoll, L.notes, L.wake);
  const bool watched = L.conv->attach(std::move(*channel)) &&
                       (!L.plan.job_at_spawn() || L.deadline_timer.arm_at(stop_instant(opt_))) &&
                       L.epoll.add(L.wake->fd(), sys::kReadable, kTagWake) &&
                       L.epoll.add(L.deadline_timer.fd(), sys::kReadable, kTagDeadline) &&
                       L.child.watch(kTagPidfd, kTagBound, kTagCgroup);
  if (!watched) {
    L.child.domain()->kill(StopCause::protocol_fault);
    L.obs.unconfirm(OutcomeKind::cleanup_unobserved, "cannot watch the child's descriptors");
  }
  L.conv->start_session(opt_.job);
  if (watched && L.plan.job_at_spawn()) {
    if (auto job = L.prepared_job()) {
      L.job_queued(*job);
      L.conv->queue(*job);
    }
  }
  L.child.update_bound(L.conv->result_ns());
  if (L.child.has_cgroup()) L.child.on_cgroup();
  return std::nullopt;
}

// Stage: after the loop. The killer is joined and assignments closed before
// anything is decided; then the verdict, from the facts alone. An
// unconfirmed stop is counted for the life of the process (S3).
Outcome Supervisor::decide(Loop& L) {
  L.child.join_killer();  // joins: the killer is done before we decide
  {
    // An assignment that arrives from now on is refused; one that arrived
    // but was never taken means this child never had the job.
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    pending_.reset();
  }
  L.obs.out.timings.kill = L.child.domain()->first_kill_ns();
  L.obs.out.timings.kill_sent = L.child.domain()->first_kill_sent_ns();
  if (L.obs.unconfirmed) {
    g_unconfirmed.fetch_add(1);
    StopFacts f = stop_facts(L);
    f.unconfirmed = L.obs.unconfirmed;
    Outcome o = verdict(std::move(f));
    // The work that may still run keeps its files: the scratch directory
    // stays, named in the outcome, until a later confirmation removes it.
    o.scratch_kept = L.child.keep_scratch();
    L.event("UNCONFIRMED stop of child " + std::to_string(L.child.pid()) + ": " + o.reason);
    return o;
  }
  L.obs.out.timings.confirmed = sys::mono_now_ns();
  leftovers_ = L.child.take_leftovers();
  StopFacts f = stop_facts(L);
  f.fault = L.conv->fault();
  f.result = L.conv->result();
  f.result_ns = L.conv->result_ns();
  f.result_after_revocation = L.conv->result_after_revocation();
  return verdict(std::move(f));
}

// The facts every verdict takes: what was observed (the phases still open
// ended at the first kill, else at the exit), the first stop cause, and
// the bounds.
StopFacts Supervisor::stop_facts(Loop& L) {
  const sys::MonoNs kill = L.child.domain()->first_kill_ns();
  const sys::MonoNs exited = L.obs.out.timings.exited;
  if (L.conv) L.conv->close_phases(kill != 0 ? kill : exited != 0 ? exited : sys::mono_now_ns());
  StopFacts f;
  f.observed = L.obs.out;
  f.cause = L.child.domain()->first_cause();
  f.exiting_at_kill = L.child.domain()->exiting_at_first_kill();
  f.deadline = L.opt().deadline;
  f.lease_bound = L.opt().lease ? L.opt().lease->get() : 0;
  f.revoke_reason = revocation().reason;
  f.revoke_by = revocation().cause;
  f.upload_done = L.conv ? L.conv->upload_done() : std::nullopt;
  f.job_refused = L.job_refused;
  return f;
}

Outcome Supervisor::run() {
  if (ran_) {
    Outcome o;
    o.kind = OutcomeKind::spawn_failed;
    o.reason = "Supervisor::run called twice";
    return o;
  }
  ran_ = true;
  running_ = true;
  struct Running {
    std::atomic<bool>& flag;
    ~Running() { flag = false; }
  } running_guard{running_};

  // A child that closes its stdin makes our next write fail with EPIPE;
  // that must not raise SIGPIPE in the host.
  sys::ScopedSigpipeBlock no_sigpipe;
  Loop L(*this, opt_);
  L.obs.out.deadline = opt_.deadline;
  L.obs.out.timings.submitted = sys::mono_now_ns();
  if (auto ended = prepare(L)) return *ended;
  if (auto ended = spawn(L)) return *ended;
  L.drive();
  return decide(L);
}

}  // namespace courier::supervisor
