// courier.hpp — (public) the API for hosts that embed git-courier.
//
//   int main(int argc, char** argv) {
//     if (auto code = courier::run_child_if_requested(argc, argv)) return *code;
//     courier::Executor executor({});
//     auto handle = executor.submit(request);
//     courier::Outcome outcome = handle.wait();
//   }
//
// An Executor runs deliveries with at most one live delivery per lane (the
// normalised remote URL) across threads and, through lane lock files, across
// processes on the host (S1). A delivery's seat is held by its work: it passes
// on only when the work never started or its stop is confirmed, and the
// supervising side is done (S2). Callers that stop waiting revoke; they never
// free a seat (S4). See docs/embedding.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "courier/host_api.hpp"
#include "courier/outcome.hpp"
#include "courier/ref_update.hpp"
#include "courier/result.hpp"
#include "courier/ssh_key.hpp"
#include "courier/update_mode.hpp"
#include "courier/words.hpp"

namespace courier {

// If argv asks for the delivery child (wire::kChildWord), runs it and returns its exit
// code; otherwise nullopt. A host's main() calls this first so that its own
// executable can serve as the child.
std::optional<int> run_child_if_requested(int argc, char** argv);

// What a delivery tells its observer, from the thread that knows it.
struct DeliveryEvent {
  enum class Kind { pending, seat_granted, dispatched, progress, finished };
  Kind kind = Kind::pending;
  std::uint64_t delivery = 0;
  // pending: who holds the lane (a delivery of this executor, or another
  // process: holder_pid with holder text read from the lane lock).
  std::uint64_t holder_delivery = 0;
  std::int64_t holder_pid = 0;
  std::string holder;
  // progress
  std::string phase;
  std::uint64_t done = 0;
  std::uint64_t total = 0;
  // phase "remote": one line the remote sent, ended by a newline (a
  // message, also kept in Outcome::remote_messages); "remote_progress": one
  // ended by a carriage return (a meter the next line replaces). Both
  // printable (control bytes escaped). See docs/embedding.md for the phases.
  std::string text;
  // dispatched
  std::int64_t child_pid = 0;
};

// How the child builds the pack (docs/performance.md).
enum class PackEngine {
  // git when a usable git is found (git_program, else `git` on this
  // process's PATH, at least git 2.32.0; checked once per process), else
  // libgit2; with git found, a small push onto history the remote has (at
  // most 16 commits missing) is still packed by libgit2, which is quicker
  // than starting git. Outcome::pack_engine says which ran.
  automatic,
  libgit2,  // libgit2's packbuilder, in the child (recomputes every delta)
  git,      // `git pack-objects` started by the child inside its kill domain (reuses stored deltas)
};

struct DeliveryRequest {
  // The delivery's id in the journal (J4): the same id submitted again is
  // not pushed again (see Executor::submit). Empty: a new id is made.
  std::string id;
  std::string repo;    // local repository (never written to)
  std::string remote;  // https:// smart-HTTP URL; no password (H2). The child
                       // requests its canonical form (wire::parse_remote).
  // One update (the usual delivery): ref, oid, update and expect_old. For
  // several, leave ref and oid empty and fill `updates` instead; a request
  // with both is refused.
  std::string ref;  // e.g. refs/heads/main
  std::string oid;  // the gated object id (full hex); the zero id deletes the ref
  // How the ref may move (see UpdateMode): by default only as `git push`
  // would without --force. The refusals end the delivery `rejected` with
  // git's word in the reason ("non-fast-forward", "fetch first", "needs
  // force", "already exists", "stale info"), before any POST
  // (remote_effect none).
  UpdateMode update = UpdateMode::fast_forward;
  // The remote's ref must be at this id (full hex; the zero id: the ref must
  // not exist), or the delivery ends `rejected` ("stale info"). Compared in
  // every mode when set; required by UpdateMode::expect_old (without it,
  // submit() ends the delivery `failed`, nothing dispatched). With
  // fast_forward the fast-forward rules apply as well; with expect_old they
  // do not (git's --force-with-lease: a lease that holds allows any move).
  std::optional<std::string> expect_old;
  // The updates of a delivery of several refs, in the order given (at most
  // kMaxRefUpdates; no ref twice). Still one delivery: one lane turn, one
  // advertisement, at most one POST, one child, one deadline. Empty: the one
  // update above.
  std::vector<RefUpdate> updates;
  // Whether they move together (see Atomicity): by default, atomic when
  // there is more than one.
  Atomicity atomic = Atomicity::automatic;
  // Push options (`git push -o`), for the server's hooks
  // (GIT_PUSH_OPTION_<n>): at most kMaxPushOptions, each at most
  // kMaxPushOptionBytes, no newline and no NUL. The server must advertise
  // push-options, or the delivery is refused before anything is sent.
  std::vector<std::string> push_options;
  // Budget from submission: the absolute deadline is fixed at submit() (D1),
  // and waiting for the lane counts against it.
  std::chrono::milliseconds budget{150'000};
  // An absolute deadline instead of `budget`: a wall-clock instant in
  // milliseconds since the epoch. The turn's monotonic deadline (D1) is
  // derived from it once, at submit(), and the journal records exactly this
  // instant, so a delivery resubmitted after a crash keeps its first
  // deadline (never extended). One already past when submit() is called
  // ends the delivery `deadline_killed` before dispatch (no child, the
  // reason says the deadline had passed before it was submitted).
  std::optional<std::int64_t> deadline_unix_ms;
  // With a journal: text of a JSON object (or empty) recorded with the
  // `submitted` entry as its field "note" and read back as
  // journal::Submission::note (compact form). It is the host's, for what
  // it needs to resubmit the delivery after a crash (the service keeps its
  // credential's name and update mode there). Never a secret: the journal
  // is readable by whoever may read its file. Text that is not a JSON
  // object, or longer than kMaxJournalNote, ends the delivery `failed`
  // before dispatch, nothing journalled. Without a journal it is ignored.
  std::string journal_note;
  std::optional<std::string> ca_file;
  // Where `ca_file` came from, for messages only ("--ca-file",
  // "GIT_SSL_CAINFO", "http.sslCAInfo", ...): a TLS failure names it, and
  // its hint never suggests setting what is already set. Empty: not said.
  std::string ca_source;
  // An HTTP proxy to reach the remote through, as a CONNECT tunnel (T1):
  // "http://[USER:PASSWORD@]HOST[:PORT]" (no scheme: http://; no port:
  // 1080). TLS stays end to end with the remote, verified against the
  // remote's name. Credentials stay in this process and go to the proxy as
  // a preemptive Basic Proxy-Authorization, per request; the child is told
  // the proxy's address only. socks*:// and https:// proxies are refused
  // (the delivery finishes `failed` before dispatch, with the reason).
  // Unset: a direct connection; proxy environment variables are not read
  // here (a host that wants git's rules resolves them itself, as the CLI
  // does: docs/operations.md).
  std::optional<std::string> proxy;
  bool allow_http_loopback = false;
  // Credentials (A1-A3): minted in this process, per HTTP request. Null: none.
  MintFn mint;
  // Whether `mint` binds the POST's body (its token carries the body's
  // SHA-256, as auth::Ed25519Minter's `ph` claim does). True, the default:
  // the child spools the pack and hashes it before the POST, and asks for
  // the POST's token with that hash. False (a bearer token, Basic
  // credentials): with the git pack engine the pack streams into the POST
  // as it is built (chunked, no spool file; docs/performance.md). Ignored
  // without `mint` (nothing to bind: the pack streams).
  bool mint_binds_payload = true;
  // Whether `mint` is asked only after the remote has refused an
  // unauthenticated advertisement GET with 401, as git asks its credential
  // helpers (T2): the GET goes first without credentials, a 200 makes the
  // whole delivery unauthenticated (no mint at all, the POST without
  // credentials), a 401 makes the child ask for the GET's header and send
  // the GET once more, authenticated. False (the default): every leg
  // carries a minted header. Ignored without `mint`.
  bool mint_after_challenge = false;
  // "Does this delivery still own its turn?" Asked before each leg and after
  // each mint; a refusal revokes. Null: always yes.
  AuthorityFn authority;
  // Ask the remote for its own progress (receive-pack's "Resolving deltas"
  // and the like, as progress events of phase "remote_progress"): the
  // `quiet` capability is then not sent. Hook output comes either way.
  bool remote_progress = false;
  PackEngine pack_engine = PackEngine::automatic;
  // For PackEngine::git and automatic: the git program (absolute path).
  // Empty: `git` found on this process's PATH at submit(). For git, none
  // there (or a relative path) ends the delivery `failed` before dispatch;
  // for automatic, libgit2 is used instead (a relative path is still
  // refused), and also when the child finds that git older than 2.32.0 (it
  // asks `git --version` only when it would pack with git: never for a
  // small push).
  std::string git_program;
  // Observer; called on executor threads, never on a supervising loop:
  // dispatched and progress come through a bounded queue on a notifier
  // thread (progress coalesced), so one that blocks cannot hold the kill,
  // the reap or the seat. pending, seat_granted and finished come from the
  // executor's worker, which they do hold while they run.
  std::function<void(const DeliveryEvent&)> on_event;
  // SSH remotes (A5): the key the parent's agent signs with for this
  // delivery (load_ssh_key). It stays in this process; the child and ssh see
  // its public half and one agent socket. Required for an ssh:// remote,
  // refused for an http(s) one.
  std::shared_ptr<const SshKey> ssh_key;
  // The known-hosts file the remote's host key must be listed in (hashed
  // entries and @revoked read; never written: host keys are verified,
  // never learned). Empty: ~/.ssh/known_hosts of the user running this
  // process.
  std::string known_hosts;
  // OpenSSH's ssh program (absolute path; a user's core.sshCommand may name
  // it, never its options). Empty: /usr/bin/ssh.
  std::string ssh_program;
  // Tests only: mint every credential with this lease fence (L3), as a
  // holder of the lane's lease under this fence would, and journal it with
  // the `claimed` entry. It stands in for the fence of a lease taken from
  // shared state, so a test can play a stale holder. Unset: none.
  std::optional<std::int64_t> fence_for_tests;
};

// The longest DeliveryRequest::journal_note accepted (bytes).
inline constexpr std::size_t kMaxJournalNote = 16 * 1024;

// One refused field of a request, in one shape for every entry point: the
// library (validate(), Executor::submit), the command line (`push`, and
// `push --json`'s "errors") and the service (the error documents of `POST
// /v1/deliveries`) say the same field and code for the same mistake.
struct FieldError {
  // The request's member: "repo", "remote", "ref", "oid", "expect_old",
  // "proxy" (the service and the command line add their own, such as "rev",
  // "credential" or "lane_dir").
  std::string field;
  std::string code;     // kMissingField, kBadField or kBadRemote
  std::string message;  // for people: names the field and what is wrong; a remote's password never
};
using FieldErrors = std::vector<FieldError>;

inline constexpr const char* kMissingField = "missing_field";  // empty, and required
inline constexpr const char* kBadField = "bad_field";          // present, and not acceptable
inline constexpr const char* kBadRemote = "bad_remote";  // the remote: malformed, ambiguous, a password, refused scheme

// The messages of `errors` joined by "; " (one line, for an outcome's reason).
std::string describe(const FieldErrors& errors);

// What validate() checks beyond the request's own text.
struct ValidateOptions {
  // Looks at the object in the repository: it must be a commit, or an
  // annotated tag of one (C3). Null: not looked at here (the child looks,
  // before any request, and ends the delivery `failed`).
  std::function<Result<void>(const std::string& repo, const std::string& oid)> object_check;
  // Set: a user name in the remote URL is refused (kBadRemote), this text
  // saying what to use instead. Unset: a user name is kept aside for a
  // credential helper. A password is always refused (H2).
  std::optional<std::string> refuse_user_in_remote;
  // The caller's own judgement of the remote once it is read (the service:
  // a named credential's scope), given its canonical form; a refusal it
  // returns joins the others. Null: none.
  std::function<std::optional<FieldError>(const std::string& canonical_remote)> remote_check;
  // The SSH key is another process's to supply (`push --via`: the
  // service's credential): an ssh remote without ssh_key is not refused
  // here. A key given with an http(s) remote still is.
  bool ssh_key_elsewhere = false;
};

// What validate() read, kept with the request: the remote taken apart once
// (its canonical form and lane, H2), the proxy read once (T1), the updates.
struct CheckedParts;

// A request that validate() accepted, with what it read. Executor::submit
// uses the parsed remote as it is: nothing reads it again. The request's
// other members (budget, deadline_unix_ms, mint, authority, on_event, ...)
// may still be set through request(); a judged one (repo, remote, ref, oid,
// update, expect_old, proxy, allow_http_loopback, ssh_key, known_hosts,
// ssh_program) changed after validation makes submit() validate the request
// anew.
class CheckedRequest {
 public:
  CheckedRequest() = default;
  const DeliveryRequest& request() const { return request_; }
  DeliveryRequest& request() { return request_; }
  // False for a default-constructed one (submit() refuses it).
  bool valid() const { return parts_ != nullptr; }
  // The remote's canonical URL (no user information) and its lane key.
  const std::string& remote() const;
  const std::string& lane() const;
  // The updates, in the request's order (one or more).
  const std::vector<RefUpdate>& updates() const;
  // Whether the updates move together: Atomicity::atomic, or automatic
  // with more than one update.
  bool atomic() const;
  const CheckedParts* parts() const { return parts_.get(); }
  // Sets DeliveryRequest::proxy, read as validate() reads it (T1), for a
  // host that decides the proxy from the remote it validated; the remote is
  // not read again. Errors: the proxy's refusal; the request is unchanged.
  tl::expected<void, FieldErrors> set_proxy(std::optional<std::string> proxy);

 private:
  friend tl::expected<CheckedRequest, FieldErrors> validate(DeliveryRequest, const ValidateOptions&);
  DeliveryRequest request_;
  std::shared_ptr<const CheckedParts> parts_;
};

// Every field of `request` judged at once, each refusal a FieldError (all
// of them, in the order a person would fix them: repo, remote, ref, oid,
// expect_old, proxy); a field whose check needs another (the object needs
// the repository) is judged only when that one passed. Looks at nothing
// but the text, unless options.object_check is set. Accepted: the request
// with its remote read once.
tl::expected<CheckedRequest, FieldErrors> validate(DeliveryRequest request, const ValidateOptions& options = {});

// One advertisement GET of `remote` after a delivery's turn ended (J2, J3):
// the host's own credential and trust settings, a budget of its own. The
// returned ObservedAfter names the ref's id (or says why it could not).
using ReadBackFn = std::function<ObservedAfter(const std::string& remote, const std::string& ref)>;

// What a read-back is allowed, from its start (it is never part of a turn).
inline constexpr std::chrono::milliseconds kReadBackBudget{10'000};

// A delivery child started ahead of the executor that will use it
// (start_early_child, ExecutorOptions::early_child): its start overlaps
// the host's own checks. Released unused, it is killed and its stop
// confirmed before the release returns.
class EarlyChild;

struct ExecutorOptions {
  // The delivery journal (J1-J4): a SQLite file, created 0600 in a 0700
  // directory. Empty: none (outcomes still carry remote_effect; nothing
  // survives this process). A journal that cannot be opened refuses every
  // delivery before dispatch (`failed`, with the reason): a delivery never
  // runs unjournalled when a journal was asked for.
  std::string journal;
  // The state backend as a URL (docs/operations.md "Where the state lives"):
  // "sqlite:PATH" (the SQLite journal at PATH, as `journal` is) or
  // "postgres://..." (the journal in PostgreSQL, shared by the hosts of a
  // fleet, and each lane also a lease there: L1-L3, docs/design.md "Leases
  // across hosts"). Empty: `journal` and `lane_dir` as above. Giving both
  // `state` and `journal` refuses every delivery, as a journal that cannot
  // be opened does; so does a state URL that cannot be read or reached.
  std::string state;
  // This host's name in a shared state (journalled with every submission,
  // named in the leases; PostgreSQL sessions are named
  // "git-courier/<host_id>/..."). Empty: the machine's host name.
  std::string host_id;
  // Recovery's read-back after `possible` (and the service's). Null: no
  // read-back; a recovered outcome then says none was made.
  ReadBackFn read_back;
  // Cross-process lane locks live here. Empty: default_lane_dir(). An
  // existing directory must be a real directory owned by this user (or
  // root), not writable by others; it is never chmodded (rule H1). A refused
  // one ends every delivery `failed` with the reason.
  std::string lane_dir;
  // Deliveries supervised at once; more wait in a queue (as pending).
  std::size_t workers = 4;
  CgroupMode cgroup = CgroupMode::automatic;
  // Tests only: a stand-in child program (absolute path to an existing file).
  std::string child_program;
  // Keep one child spawned ahead of need: it has said hello and waits, in
  // its own process group (or cgroup), holding no lane. A delivery that gets
  // its seat hands it the job and, by descriptor passing, the lane lock; a
  // new warm child is then spawned. It is killed and confirmed like any
  // other child when the executor shuts down.
  bool warm_child = false;
  // Keep this many warm children ready (0: as warm_child says, none or
  // one). Each is spawned ahead of need as above; one used by a delivery is
  // replaced, and each is killed and confirmed at shutdown. A host that
  // runs several deliveries at once on different lanes (a service with
  // several workers) wants about as many warm children as workers.
  std::size_t warm_children = 0;
  // A child started before this executor (start_early_child): it becomes
  // this executor's one warm child, handed to the first delivery that gets
  // its seat even before its hello (the job waits in its socket), with the
  // lane lock by descriptor passing as any warm child's; it is not
  // replaced. Unused (the delivery never dispatched: S5), it is killed and
  // confirmed when the executor shuts down. Null: none.
  std::shared_ptr<EarlyChild> early_child;
  // Make this process a child subreaper (PR_SET_CHILD_SUBREAPER, process-wide,
  // never turned off again) so that a delivery's orphaned descendants come
  // back to it wherever they moved their session, process group or cgroup,
  // and are killed and reaped before a stop is confirmed. Off by default:
  // with it on, every orphan in this process's subtree is reparented here,
  // and a child this host forks itself (with SIGCHLD) during a delivery
  // cannot be told from a delivery's orphan and is killed and reaped too.
  // Turn it on when deliveries are this process's only children (the CLI
  // does). Off: a confirmed stop covers the kill domain only.
  bool subreaper = false;
  // Tests only: shorter confirmation bounds.
  MonoNs reap_bound = kReapBound;
  MonoNs eof_bound = kEofBound;
  // With a PostgreSQL state (`state`): the lanes' leases (L1, L3). The
  // margin must cover reap_bound + eof_bound, so that a stop is confirmed
  // before the lease can expire elsewhere, and be under two thirds of the
  // ttl; other values refuse every delivery (failed, with the reason).
  MonoNs lease_ttl = kLeaseTtl;
  MonoNs lease_margin = kLeaseMargin;
  // Child stderr and supervisor log lines; default: this process's stderr.
  // Both reach the host through the delivery's notifier thread, never from
  // its supervising loop (stderr capped at 256 KiB per delivery).
  std::function<void(std::string_view)> on_child_stderr;
  std::function<void(std::string_view)> on_log;
  // Tests only: called on the worker at named points of a turn, with the
  // delivery's id: "claimed" (the dispatch claim won, nothing handed to a
  // child yet) and "assigned" (a warm child was given the job, before the
  // delivery reaches that child). A test revokes there to hit the window
  // deterministically. Null: nothing.
  std::function<void(std::uint64_t delivery, std::string_view point)> at_point_for_tests;
};

// Where a delivery is, once: the enum and its words (the service's "state"
// field and its ?state= filter) come from this list.
#define COURIER_DELIVERY_STATE_LIST(X)                                            \
  X(queued)   /* submitted, not yet waiting for its lane (the service's queue) */ \
  X(pending)  /* waiting for its lane's seat */                                   \
  X(running)  /* seated: dispatched, or about to be */                            \
  X(stopping) /* revoked while running: the stop is not yet confirmed */          \
  X(finished) /* its outcome is decided */

COURIER_WORD_ENUM(DeliveryState, COURIER_DELIVERY_STATE_LIST);

// What DeliveryHandle::revoke() did. A delivery it answered `cancelled` or
// `stopping` never ends `delivered` (nor with any other result of its
// child's): the revocation came first.
enum class RevokeAnswer {
  cancelled,  // before the dispatch claim: nothing was or will be spawned (cancelled_no_dispatch)
  stopping,   // after the claim, before the child's result: it is stopped, the outcome is `revoked`
  too_late,   // its outcome was already decided (finished, expired, refused, or the child's result
              // came first: the child is still stopped, and its result stands); or an empty handle
  repeated,   // an earlier revocation is acting; this one changed nothing
};

class Executor;

// The caller's view of one delivery. Destroying it before the delivery has
// finished revokes the delivery (the seat still waits for the confirmed stop).
class DeliveryHandle {
 public:
  DeliveryHandle() = default;
  DeliveryHandle(DeliveryHandle&&) noexcept = default;
  DeliveryHandle& operator=(DeliveryHandle&&) noexcept;
  ~DeliveryHandle();

  std::uint64_t id() const;
  // Revokes: before the dispatch claim nothing is ever spawned
  // (cancelled_no_dispatch); after it, the child is killed and its stop
  // confirmed (revoked). Idempotent, any thread: the first revocation's
  // cause and words stand. The cause is `caller` unless said otherwise
  // (RevokeCause: a service's drain says `shutdown`); a cancellation by the
  // caller or by authority is final under its id (J5). After the claim
  // the revocation's intent is made durable in the journal first, waiting
  // at most kRevokeJournalBound, then the child is killed (J1);
  // RevokeCause::lease_lost waits for nothing.
  // Answers what it did (RevokeAnswer): a host that must know whether the
  // revocation won reads it; one that need not ignores it.
  RevokeAnswer revoke(const std::string& reason, RevokeCause cause = RevokeCause::caller);
  // Revokes only a delivery that has not been dispatched: queued, pending
  // on its lane, or seated before its claim (waiting for a lease, say) ends
  // cancelled_no_dispatch (answer: cancelled); one already claimed goes on
  // untouched (too_late), as does one finished. A service's drain withdraws
  // what it queued and lets the live work finish.
  RevokeAnswer withdraw(const std::string& reason, RevokeCause cause = RevokeCause::caller);
  // wait(), wait_for(), state() and last_pending() on an empty handle
  // (default-constructed, or moved from) throw std::logic_error: it names no
  // delivery. id() is 0 and revoke() does nothing.
  //
  // Blocks until the delivery has finished: its outcome is final and the
  // seat has been released or retained.
  Outcome wait();
  // A look, not a cancel: returns the outcome if finished within `timeout`,
  // else nullopt — and revokes nothing. The delivery goes on.
  std::optional<Outcome> wait_for(std::chrono::milliseconds timeout);
  DeliveryState state() const;
  // While pending: who holds the lane.
  DeliveryEvent last_pending() const;

  struct Shared;

 private:
  friend class Executor;
  explicit DeliveryHandle(std::shared_ptr<Shared> s) : s_(std::move(s)) {}
  std::shared_ptr<Shared> s_;
};

class Executor {
 public:
  explicit Executor(ExecutorOptions options);
  // Revokes every delivery still queued or running and waits for each to
  // finish (running ones end with a confirmed stop or an unconfirmed outcome
  // within the stated bounds), then joins its threads.
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Fixes the turn's absolute deadline now and queues the delivery. With a
  // journal, its intent is durable before this returns (J1), and an id the
  // journal knows is not pushed twice (J4): one that finished delivered or
  // up_to_date returns its recorded outcome (replayed, nothing sent); one
  // that ended interrupted or revoked with remote_effect possible is
  // delivered again as a compare-and-swap on the journalled old id
  // (UpdateMode::expect_old, whatever the request's mode: the move from
  // that id was already allowed when the first attempt was cleared); one in
  // flight in a live process, one that ended any other way (its recorded
  // outcome is returned), or the same id for a different repo, remote, ref
  // or object is refused. A request with UpdateMode::expect_old and no
  // expect_old finishes `failed`. A request on a poisoned lane finishes at once `lane_poisoned`; one whose
  // remote is malformed, ambiguous or carries a password (wire::parse_remote,
  // rule H2), or whose lane directory was refused (H1), finishes `failed`
  // with the reason. No child exists in either case. The request is judged
  // by validate() (without looking in the repository): a refusal ends the
  // delivery `failed` before dispatch, its reason every FieldError's message.
  DeliveryHandle submit(DeliveryRequest request);
  // The same, for a request validate() accepted: its remote is not read
  // again (one whose judged fields changed since is validated anew).
  DeliveryHandle submit(CheckedRequest request);

  // A warm child waiting for a job, if any (0: none ready).
  std::int64_t warm_child_pid() const;
  // Waits until a warm child has said hello (or the timeout); its pid or 0.
  std::int64_t wait_warm_child(std::chrono::milliseconds timeout) const;
  // How many warm children have said hello and wait for a job now.
  std::size_t warm_ready() const;
  // Waits until at least `n` warm children are ready (or the timeout);
  // returns how many are.
  std::size_t wait_warm_ready(std::size_t n, std::chrono::milliseconds timeout) const;
  // The pids of the warm children ready now.
  std::vector<std::int64_t> warm_child_pids() const;

  // Recovery (J3): every journalled delivery without `finished` whose
  // submitting process is gone (pid + start time + boot id) and whose lane
  // no live process holds: a child still alive in its kill domain is killed
  // and its stop confirmed, then the delivery is finished `interrupted`
  // with the remote_effect its last durable transition allows (and, when
  // that is `possible`, the read-back). A retained delivery whose child is
  // found gone gets `stop_confirmed` and its scratch directory removed.
  // Idempotent; safe while other processes run deliveries on the journal.
  // Runs once when the Executor is made with a journal; call again at will.
  // Returns what it finished now. Errors: journal_failed (the journal could
  // not be opened or read), invalid_argument (the lane directory was
  // refused: without its locks no delivery is touched, J3).
  Result<std::vector<Outcome>> recover();
  // What the recovery at construction finished (empty: nothing, or no
  // journal), or why it could not run (the errors of recover()).
  const Result<std::vector<Outcome>>& recovered_at_start() const;

  // How many children this executor spawned (tests count them, S5).
  std::uint64_t spawned() const;
  const std::string& lane_dir() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// Descriptors of lane locks retained for the life of this process because a
// delivery on that lane could not confirm its child's stop (S3).
std::vector<int> retained_lane_lock_fds();

// The default lane directory of the effective user, the same one the
// `git-courier` commands use (rule S1): /run/git-courier/lanes for root,
// else <home>/.local/state/git-courier/lanes with <home> the uid's home
// directory in the password database. Derived from the effective uid
// alone, never from XDG_* or HOME (docs/operations.md). Errors:
// invalid_argument (no home directory known for the uid).
Result<std::string> default_lane_dir();

// Starts a delivery child now, with no job, as a warm child of an executor
// built with `how` would be (child_program, cgroup, subreaper, the bounds,
// on_child_stderr, on_log): it holds no lane until a delivery's seat
// hands it the lane lock. Give it to ExecutorOptions::early_child. Never
// null: a child that could not be spawned is found gone, and the delivery
// gets a cold child instead.
std::shared_ptr<EarlyChild> start_early_child(const ExecutorOptions& how);

}  // namespace courier
