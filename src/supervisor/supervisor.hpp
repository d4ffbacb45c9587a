// supervisor.hpp — one delivery's child, from spawn to confirmed stop.
//
// The Supervisor spawns the delivery child (C1), drives the framed
// conversation from one event loop (P2), answers mint and check requests
// through host callbacks run off the loop, enforces the absolute deadline
// with an independent killer (D1, D2), and ends only when the stop is
// confirmed — the leader reaped by us, end-of-file on both of its pipes,
// and (cgroup mode) its cgroup empty — or when confirming failed within the
// stated bounds, which it reports as an unconfirmed outcome that retains the
// seat (S2, S3).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/messages.hpp"
#include "courier/result.hpp"
#include "courier/host_api.hpp"
#include "courier/outcome.hpp"
#include "supervisor/lease_bound.hpp"
#include "sys/clock.hpp"
#include "wire/child_argv.hpp"

namespace courier::supervisor {

struct StopFacts;  // verdict.hpp

class KillDomain;

using courier::AuthorityAnswer;
using courier::CgroupMode;
using courier::kEofBound;
using courier::kReapBound;
using courier::MintAnswer;
using courier::MintRequest;

// A child that has sent its result gets this long to exit by itself.
inline constexpr sys::MonoNs kResultExitGrace = 1'000 * sys::kNsPerMs;
// The child's stderr is relayed up to this many bytes, then counted and dropped.
inline constexpr std::size_t kStderrRelayCap = 256 * 1024;
// Replies queued for a child that does not read them, before we stop reading it.
inline constexpr std::size_t kMaxOutboundBytes = 1024 * 1024;
// The host's observers (on_progress, on_stderr, on_event, on_spawned) run off
// the drive loop; run() waits this long at most for the last of them before
// it returns, and never past deadline + reap_bound + eof_bound (D4). A host
// whose observer stalls longer loses what was still queued for it.
inline constexpr sys::MonoNs kObserverDrainBound = 100 * sys::kNsPerMs;

// The environment allowlist (A1): only these names reach the child.
inline constexpr std::string_view kChildEnvAllowlist[] = {"PATH",         "HOME", "TMPDIR", "SSL_CERT_FILE",
                                                          "SSL_CERT_DIR", "LANG", "TZ"};

// The child's kill domain as SupervisorOptions::prepare_job sees it.
struct ChildDomain {
  std::int64_t pid = 0;  // the child, leader of its process group
  std::string cgroup;    // its cgroup directory; "" without one
};

struct SupervisorOptions {
  // The job as the host describes it; parent_pid, deadline_mono_ns and
  // scratch_dir are filled in by the supervisor.
  protocol::Job job;
  // Absolute CLOCK_MONOTONIC deadline, fixed by the turn (D1). Never extended.
  sys::MonoNs deadline = 0;
  // Tests only: a stand-in child program. Must be an absolute path to an
  // existing file; anything else is refused (spawn_failed). Empty: the
  // running executable, /proc/self/exe.
  std::string child_program;
  // The words the child is started with after argv[0]: argv is exactly
  // [program, child_args...] (C1). The program's main() must recognise them.
  std::vector<std::string> child_args = {std::string(wire::kChildWord)};
  // A descriptor the child inherits at sys::kInheritedFd (the lane lock, S6).
  int inherit_fd = -1;
  CgroupMode cgroup = CgroupMode::automatic;
  // Make this process a child subreaper before the spawn, and after the
  // leader's reap kill and reap every orphan that came back to it (see
  // ExecutorOptions::subreaper for what that means for a host). Off: the
  // confirmed stop covers the kill domain only (ChildFacts::subreaped).
  bool subreaper = false;
  // Warm: spawn now, on a Unix socketpair (stdin and stdout), with no job and
  // no deadline; the child says hello and waits. assign() later gives it a
  // delivery's options (job, deadline, callbacks) and passes the lane lock
  // (inherit_fd) with the job frame by SCM_RIGHTS. Until then it holds no
  // lane, and revoke() kills and confirms it like any other child.
  bool warm = false;
  // Warm mode: called on the drive loop once the child has said hello.
  std::function<void()> on_ready;
  // The lane's lease bound (L1, several hosts sharing lanes): the child is
  // killed at min(deadline, lease bound), the killer re-armed whenever the
  // lease keeper moves the bound, and the child is told each new bound so
  // that its own timer kills it there too (L2). A kill at the bound ends
  // the delivery `revoked`, revoke_cause "lease_lost". Null: no lease.
  std::shared_ptr<LeaseBound> lease;
  // The fence of the lane's lease (L3): every mint request carries it
  // (MintRequest::fence), so a verifier can refuse a stale holder.
  std::optional<std::int64_t> fence;
  // Tests only: the parent does not kill at the lease bound (the deadline
  // still holds), so that the child's own timer (L2) is seen to act.
  bool lease_kill_disabled_for_tests = false;
  // Bounds; tests may shorten them. Defaults are the named constants.
  sys::MonoNs reap_bound = kReapBound;
  sys::MonoNs eof_bound = kEofBound;

  // Host callbacks, none of them on the drive loop (D2, S4): mint and
  // authority run on a worker thread whose answers come back to the loop;
  // the observers on_progress, on_stderr (and the default relay), on_event
  // and on_spawned run, in order, on a notifier thread through a bounded
  // queue (progress coalesced, stderr capped): one that blocks holds neither
  // the kill, nor the reap, nor the outcome (docs/embedding.md).
  courier::MintFn mint;
  courier::AuthorityFn authority;
  // The proxy's credentials (job.proxy has none): the "Proxy-Authorization:
  // Basic ..." line given with every granted check, i.e. once per leg,
  // right before the leg starts, and never after a stop began.
  std::optional<std::string> proxy_authorization;
  // The write-ahead of the POST (J1): called on the host-call thread when
  // the child asks at protocol::kCheckPost and authority holds, with that
  // check (every ref's advertised old id, and the refs the POST sends). The child is told it may begin the POST only
  // after this returns success; an error refuses the POST (the delivery
  // ends `failed`, remote_effect none, with the error as its reason).
  // Null: nothing to record, the POST is cleared at once.
  std::function<Result<void>(const protocol::Check& post)> before_post;
  // J1 for authority's revocation: called on the host-call thread with the
  // revocation's words when authority said no (at a check, or after a
  // mint), before the answer reaches the loop that kills. It may block for
  // at most its own bound (the executor's journal write waits at most
  // kRevokeJournalBound). Null: nothing to record.
  std::function<void(const std::string& words)> before_authority_revoke;
  // J5: asked on the drive loop when the child's result arrives, whether
  // the result came before the delivery's revocation (the executor's claim
  // word decides, so that revoke() can say which came first). False: the
  // revocation won (revoke() answered `stopping`), the result only gives
  // its facts and the outcome is `revoked`. Null: every result may stand.
  std::function<bool()> result_first;
  std::function<void(const protocol::Progress&)> on_progress;
  std::function<void(std::string_view)> on_stderr;   // default: relayed to our stderr
  std::function<void(std::string_view)> on_event;    // one-line supervisor log (spawned, killed, ...)
  std::function<void(std::int64_t pid)> on_spawned;  // the child exists (posted before the job is sent)
  // Called on the drive loop once the child exists (its kill domain is
  // known) and right before its job frame is queued (a warm child: when its
  // delivery is assigned). It may complete the job: an ssh:// remote's
  // Job::ssh, the parent's agent for this delivery, which serves only this
  // child's kill domain (A5). What it returns is kept until the stop is
  // confirmed, then released. An error ends the delivery transport_failed
  // with its message (remote_effect none): the child never gets the job.
  // Null: the job goes as it is.
  std::function<Result<std::shared_ptr<void>>(const ChildDomain&, protocol::Job&)> prepare_job;
  // A tap on the conversation: every frame body queued for the child
  // (to_child = true) and every frame body read from it. For audits and
  // tests; runs on the drive loop.
  std::function<void(bool to_child, std::string_view body)> on_frame;
};

struct Leftovers;

class Supervisor {
 public:
  explicit Supervisor(SupervisorOptions options);
  // Destroying a Supervisor whose run() is still executing on another thread
  // is a programming error and aborts loudly.
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Spawns and supervises to the end. Call once. Blocks the calling thread,
  // which must outlive the child (the child's death signal is tied to it).
  Outcome run();

  // From any thread, any time: revoke the delivery (A4). Before the spawn,
  // run() returns cancelled_no_dispatch without spawning; after it, the kill
  // domain is killed at once from the revoking thread and the loop confirms.
  // `cause` is carried into the outcome (J5).
  void revoke(std::string reason, RevokeCause cause = RevokeCause::caller);

  // Warm mode: hands this child a delivery. `delivery` is a full set of
  // options for a cold delivery; its job, deadline, inherit_fd (sent by
  // SCM_RIGHTS) and callbacks take effect now. False when the child is not
  // warm, already assigned, revoked, or already gone: use a cold child.
  bool assign(SupervisorOptions delivery);

  // Warm mode: true once the child has said hello (ready for a job).
  bool ready() const { return ready_.load(); }

  // After run(): removes what a confirmed stop left behind (the child's
  // empty cgroup, its scratch directory). A host that hands the seat on
  // calls it after that; otherwise the destructor does it.
  void tidy();

  // The child's pid once spawned (0 before). For observers and tests.
  std::int64_t child_pid() const { return child_pid_.load(); }

 private:
  struct Loop;
  // What the drive loop reads of the revocation, under mu_.
  struct Revocation {
    bool revoked = false;
    std::string reason;
    sys::MonoNs at = 0;
    RevokeCause cause = RevokeCause::caller;
  };
  Revocation revocation();
  // Warm mode: the assignment waiting, moved to assigned_ (null: none).
  const SupervisorOptions* take_assignment();
  // run()'s stages; each returns the outcome when the run ends there.
  std::optional<Outcome> prepare(Loop& L);
  std::optional<Outcome> spawn(Loop& L);
  Outcome decide(Loop& L);
  StopFacts stop_facts(Loop& L);

  SupervisorOptions opt_;
  std::mutex mu_;  // guards revoked_/domain_ publication
  bool revoked_ = false;
  std::string revoke_reason_;
  RevokeCause revoke_cause_ = RevokeCause::caller;
  sys::MonoNs revoke_ns_ = 0;
  std::shared_ptr<KillDomain> domain_;
  std::shared_ptr<void> wake_;  // sys::EventFd, type-erased to keep sys out of this header
  std::atomic<std::int64_t> child_pid_{0};
  std::atomic<bool> running_{false};
  std::atomic<bool> ready_{false};
  bool ran_ = false;
  bool finished_ = false;                        // under mu_: the loop has ended
  std::optional<SupervisorOptions> pending_;     // under mu_: assignment not yet taken
  std::unique_ptr<SupervisorOptions> assigned_;  // the loop's, once taken
  std::unique_ptr<Leftovers> leftovers_;         // run()'s, until tidy()
};

// Resolves the program to spawn: the override (absolute, existing) or
// /proc/self/exe. Errors: invalid_argument.
Result<std::string> resolve_child_program(const std::string& override_path);

// The child's environment: the allowlisted names present in ours.
std::vector<std::string> child_environment();

// Process-wide count of children whose stop could not be confirmed. Only ever
// incremented (S3): an unconfirmed child is a permanent fact of this process.
std::uint64_t unconfirmed_children();

}  // namespace courier::supervisor
