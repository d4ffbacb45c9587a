// outcome.hpp — (public) what a delivery ended as, and the release rule: the
// one function that decides whether its seat may pass to the next turn.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "courier/exit_code.hpp"
#include "courier/words.hpp"

namespace courier {

// An instant on CLOCK_MONOTONIC, in nanoseconds (system-wide on Linux, so a
// host, its children and the outcome agree on it).
using MonoNs = std::int64_t;

enum class SeatDisposition { release, retain };

// The kinds, once: one row each, and the enum, the words, the release rule
// (S2, S3), the exit codes and the summaries are generated from this table.
// Columns: kind (its word), seat (retain: the stop could not be confirmed;
// seat retained, lane poisoned), exit code (exit_code.hpp), summary.
#define COURIER_OUTCOME_LIST(X)                                                                                    \
  X(delivered, release, ok, "the remote reported ok for the ref at the gated id")                                  \
  X(up_to_date, release, ok, "the remote ref was already at the gated id; no POST")                                \
  X(rejected, release, rejected, "the remote said ng (with its reason), or the update rule refused the move")      \
  X(failed, release, failed, "the child reported a local failure (e.g. a repository error)")                       \
  X(cancelled_no_dispatch, release, revoked, "revoked before the dispatch claim; no child existed")                \
  X(revoked, release, revoked, "revoked while live; killed; stop confirmed")                                       \
  X(deadline_killed, release, deadline, "the deadline was reached (before or after dispatch); stop confirmed")     \
  X(auth_failed, release, failed, "401/403, or no token could be minted")                                          \
  X(transport_failed, release, failed, "TLS, connection, redirect, non-200 or a malformed answer")                 \
  X(protocol_fault, release, protocol, "the child broke the protocol; killed; stop confirmed")                     \
  X(child_signalled, release, signalled, "died by a signal git-courier did not send (OOM killer); stop confirmed") \
  X(spawn_failed, release, failed, "no child came to exist")                                                       \
  X(lane_poisoned, release, unconfirmed, "refused at once: an earlier delivery on this lane is unconfirmed")       \
  X(unreaped, retain, unconfirmed, "the leader did not exit within REAP_BOUND after SIGKILL")                      \
  X(wait_failed, retain, unconfirmed, "waitid failed: the exit cannot be known")                                   \
  X(cleanup_unbounded, retain, unconfirmed, "end-of-file was not seen within EOF_BOUND after the reap")            \
  X(cleanup_unobserved, retain, unconfirmed, "a read error or loop failure: the pipes could not be watched")       \
  X(domain_populated, retain, unconfirmed, "the kill domain still had members after the kill")                     \
  /* an unconfirmed stop caused by a revocation; stop_failure names which */                                       \
  X(cancel_uncertain, retain, unconfirmed, "a revocation's kill could not be confirmed")                           \
  X(interrupted, release, failed, "found unfinished in the journal after its parent died; finished by recovery")

COURIER_WORD_ENUM(OutcomeKind, COURIER_OUTCOME_LIST);

// One row of the outcome table.
struct OutcomeRow {
  OutcomeKind kind;
  std::string_view word;  // as the outcome document, the journal and the logs spell it
  SeatDisposition seat;   // the release rule's answer
  ExitCode exit;          // `git-courier push`'s exit code
  std::string_view summary;
};

inline constexpr OutcomeRow kOutcomeRows[] = {
#define COURIER_OUTCOME_ROW(n, seat, exit, summary) \
  {OutcomeKind::n, #n, SeatDisposition::seat, ExitCode::exit, summary},
    COURIER_OUTCOME_LIST(COURIER_OUTCOME_ROW)
#undef COURIER_OUTCOME_ROW
};

// The kind's row (every kind has one: the enum and the table are made from
// the same list).
const OutcomeRow& outcome_row(OutcomeKind k);

const char* outcome_name(OutcomeKind k);

// True for the kinds whose stop could not be confirmed (the table's seat
// column says retain): the five unconfirmed kinds and cancel_uncertain.
bool is_unconfirmed(OutcomeKind k);

// What the remote may have done with this delivery (J2): never stronger
// than what was observed.
#define COURIER_REMOTE_EFFECT_LIST(X)                                                  \
  X(none)     /* provably nothing the remote could apply was sent (no post_started) */ \
  X(possible) /* the POST was cleared to begin and no report-status was read */        \
  X(applied)  /* the report said ok for the ref */                                     \
  X(refused)  /* the report said ng for the ref */                                     \
  X(mixed)    /* a delivery of several refs whose refs' effects differ (non-atomic) */

COURIER_WORD_ENUM(RemoteEffect, COURIER_REMOTE_EFFECT_LIST);

const char* remote_effect_name(RemoteEffect e);
// The effect a name spells (nullopt: no such name).
std::optional<RemoteEffect> remote_effect_from_name(const std::string& name);
// The kind a name spells (nullopt: no such name).
std::optional<OutcomeKind> outcome_from_name(const std::string& name);

// A read-back (J2, J3): one advertisement GET made after the delivery's
// turn ended and its seat was released. An observation with a time, never
// a verdict: it may see a later delivery's update.
struct ObservedAfter {
  std::string oid;                     // the ref's id as advertised (40 zeros: the ref is absent)
  std::int64_t at_unix_ms = 0;         // when the advertisement was read (wall clock)
  bool matches_this_delivery = false;  // oid is this delivery's gated object
  std::string error;                   // the read-back failed: why (oid empty)
  bool operator==(const ObservedAfter&) const = default;
};

// What became of one ref of a delivery (Outcome::refs), as git's push
// summary says it.
#define COURIER_REF_STATUS_LIST(X)                                                          \
  X(ok)            /* the remote's report said ok for it (git: the new id, or [deleted]) */ \
  X(ng)            /* the remote's report said ng, with its reason ([remote rejected]) */   \
  X(up_to_date)    /* the remote already had it at the new id: no command sent for it */    \
  X(rejected)      /* refused here before anything was sent, in git's words ([rejected]) */ \
  X(not_attempted) /* no command sent for it: another ref or the delivery stopped first */  \
  X(unknown)       /* its command was sent and no report about it was read (possible) */

COURIER_WORD_ENUM(RefStatus, COURIER_REF_STATUS_LIST);

// One ref of a delivery, as it ended. J2 per ref: remote_effect is none
// when no command for it was sent, possible when the POST was cleared and
// nothing about it was read, applied for ok, refused for ng.
struct RefOutcome {
  std::string ref;
  std::string oid;                     // the new id it was to take (the zero id: a deletion)
  std::optional<std::string> old_oid;  // as the remote advertised it (the zero id: absent)
  RefStatus status = RefStatus::not_attempted;
  std::string reason;  // rejected, ng: why (git's or the remote's words)
  RemoteEffect remote_effect = RemoteEffect::none;
  // Recovery's read-back of this ref after `possible` (J2: an observation
  // with a time, never a verdict); matches_this_delivery: the ref was at
  // its new id (a deletion: absent). Only for refs whose effect is possible.
  std::optional<ObservedAfter> observed_after;
  bool operator==(const RefOutcome&) const = default;
};

// The delivery's remote_effect from its refs': their common value, leaving
// out the refs already up to date (they needed nothing), or mixed when
// those differ (only a non-atomic delivery's can: one applied and one
// refused, or one refused here and one sent). None when every ref was up
// to date.
RemoteEffect combined_remote_effect(const std::vector<RefOutcome>& refs);

// J2 per ref: a ref's remote_effect from its status (ok: applied, ng:
// refused, unknown: possible; up_to_date, rejected, not_attempted: none, as
// no command for it was sent).
RemoteEffect ref_remote_effect(RefStatus status);

// Why a delivery was revoked (J5): every revocation carries one.
#define COURIER_REVOKE_CAUSE_LIST(X)                                                            \
  X(caller)     /* the host or user: revoke(), a destroyed handle, Ctrl-C, the API's DELETE */  \
  X(authority)  /* the host's authority said the delivery no longer owns its turn (A3, A4) */   \
  X(shutdown)   /* the executor or the service stopped (a drain), nobody asked for this stop */ \
  X(lease_lost) /* the lane's lease was not renewed in time, or its bound came (L1) */

COURIER_WORD_ENUM(RevokeCause, COURIER_REVOKE_CAUSE_LIST);

const char* revoke_cause_name(RevokeCause c);
// The cause a name spells (nullopt: no such name).
std::optional<RevokeCause> revoke_cause_from_name(const std::string& name);
// A cancellation by the caller or by authority is final (J5): the same id
// replays it and never runs again. shutdown and lease_lost are stops nobody
// asked for: the same id runs again (DESIGN §6).
bool revocation_is_final(RevokeCause c);

// The release rule (S2, S3) as data: unconfirmed kinds retain, every other
// kind releases. Callers must also have finished supervising (S2b): the
// supervisor only reports an outcome after its loop is done.
SeatDisposition release_rule(OutcomeKind k);

struct ChildFacts {
  std::int64_t pid = 0;
  std::optional<int> exit_code;  // when it exited normally
  std::optional<int> signal;     // when a signal ended it
  bool reaped = false;
  bool stdout_eof = false;
  bool stderr_eof = false;
  bool cgroup = false;               // ran in its own cgroup
  bool cgroup_empty = false;         // cgroup.events said populated 0
  std::vector<std::int64_t> census;  // group members still alive after the stop
  // This process was a child subreaper for the delivery: its orphaned
  // descendants, wherever they went, were looked for after the reap, and
  // the stop is confirmed for all of them. False: for the kill domain only.
  bool subreaped = false;
  std::vector<std::int64_t> strays;  // orphans killed and reaped after the leader
};

struct Timings {
  MonoNs submitted = 0;
  MonoNs seat = 0;          // the seat was granted (0: never)
  MonoNs spawned = 0;       // clone3 returned (0: never)
  MonoNs hello = 0;         // hello received
  MonoNs assigned = 0;      // the job was given to this child (warm: after hello)
  MonoNs job_sent = 0;      // the job frame was fully written (0: never)
  MonoNs job_accepted = 0;  // the child's first frame after reading its job
  MonoNs kill = 0;          // first SIGKILL to the domain (0: none)
  MonoNs kill_sent = 0;     // that first SIGKILL's system calls returned (0: none)
  MonoNs exited = 0;        // leader exit observed
  MonoNs reaped = 0;
  // The stop's other facts, each when the supervisor observed it (0: never):
  // end-of-file on the child's stdout and stderr, and (cgroup mode)
  // cgroup.events saying populated 0.
  MonoNs stdout_eof = 0;
  MonoNs stderr_eof = 0;
  MonoNs cgroup_empty = 0;
  MonoNs confirmed = 0;  // stop confirmed: seat ready (0: never)
  // The seat was given back to the lane (0: retained): the next turn on
  // the lane may be granted it from here.
  MonoNs released = 0;
  MonoNs revoke = 0;  // revoke() called (0: never)
  // The revocation's intent was durable in the journal (0: no journal, or
  // not before the outcome): J1 puts it before `kill` unless the journal
  // took longer than kRevokeJournalBound.
  MonoNs revoke_journalled = 0;
  MonoNs post_started = 0;  // the POST was cleared to begin (0: never)
};

// The revoke_cause (its first word) of a delivery stopped because its
// lane's lease was lost (L1): a renewal failed or found the lease gone, or
// the lease bound came. Followed by ": " and why.
inline constexpr std::string_view kLeaseLostCause = "lease_lost";

struct Outcome {
  OutcomeKind kind = OutcomeKind::spawn_failed;
  std::string reason;       // one line for people
  std::string delivery_id;  // the journal's id for this delivery (DeliveryRequest::id or generated)
  int attempt = 1;          // which attempt of that id this is (a re-delivery after `possible` is 2, ...)
  // J2: what the remote may have done. none only when the POST was never
  // cleared to begin.
  RemoteEffect remote_effect = RemoteEffect::none;
  // The read-back after `possible`, when one was made.
  std::optional<ObservedAfter> observed_after;
  // The kill domain the child ran in: "cgroup" or "process_group" (empty:
  // no child). In process_group mode a confirmed stop covers the group: a
  // member that left it (setsid) and closed its pipes is not seen.
  std::string kill_domain;
  // cancel_uncertain: the unconfirmed kind the revocation's stop ended in.
  std::optional<OutcomeKind> stop_failure;
  // The revocation's words, when the delivery was revoked (timings.revoke: when).
  std::string revoke_cause;
  // Who revoked it (J5): set whenever revoke_cause is.
  std::optional<RevokeCause> revoked_by;
  // The revocation's intent was not durable in the journal within
  // kRevokeJournalBound, so the kill went ahead without it (J1).
  bool revoke_unjournalled = false;
  // The child's scratch directory, kept because the stop is unconfirmed
  // (the work that may still run keeps its files). Empty: removed.
  std::string scratch_kept;
  // The journal could not record something (finished, or a transition):
  // the outcome stands, the journal's row is finished later by recovery.
  std::string journal_error;
  // The outcome was read from the journal: an earlier attempt of this id
  // already finished this way, and nothing was sent now (J4).
  bool replayed = false;
  bool dispatched = false;  // a child was spawned for this delivery
  bool warm = false;        // the child was spawned ahead of need and then given this job
  ChildFacts child;
  Timings timings;
  MonoNs deadline = 0;
  // The first update's old id as the remote advertised it (Outcome::refs
  // has every ref's).
  std::optional<std::string> old_oid;
  // Every ref of the delivery, in the request's order (one for a delivery of
  // one ref). Empty only for an outcome decided before the request was read
  // (a refused request).
  std::vector<RefOutcome> refs;
  std::optional<std::uint64_t> objects;
  std::optional<std::uint64_t> bytes_sent;
  // The pack engine that built (or was building) the pack: "libgit2" or
  // "git" (see PackEngine). Absent when the child never began a pack.
  std::optional<std::string> pack_engine;
  // Phase durations the child measured (milliseconds).
  std::optional<std::uint64_t> advertise_ms;
  std::optional<std::uint64_t> pack_ms;
  std::optional<std::uint64_t> upload_ms;
  // The remote's own words: its side-band lines ended by a newline (hook
  // output such as "refs/heads/locked is locked", receive-pack's messages),
  // oldest first, as the child read them. As git shows them: the line end
  // is not part of the text and a tab stays a tab; other control bytes and
  // anything outside ASCII are escaped as \xNN, a backslash doubled; a line
  // is cut at 512 bytes (marked "..."). At most 100 lines: when the remote
  // said more, the earliest were dropped and remote_messages_dropped counts
  // them. Empty when the child sent no result (killed before it).
  std::vector<std::string> remote_messages;
  std::uint64_t remote_messages_dropped = 0;
  std::uint64_t stderr_relayed = 0;
  std::uint64_t stderr_dropped = 0;
  // What the child said about itself in hello (argv, env names, fds).
  std::vector<std::string> child_argv;
  std::vector<std::string> child_env_keys;
  std::vector<int> child_fds;

  SeatDisposition seat() const { return release_rule(kind); }
  // kill time minus deadline (ns), when killed at the deadline.
  std::optional<MonoNs> deadline_overrun() const;
};

}  // namespace courier
