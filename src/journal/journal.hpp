// journal.hpp — the delivery journal: a durable record of every delivery
// and of how far it got, that outlives the process that ran it (J1-J4).
//
// One row per delivery id and an append-only list of its transitions:
//   submitted -> claimed -> dispatched -> advertised -> post_started
//             -> answered -> finished            (plus revoke_requested)
// A re-delivery of the same id (after `possible`, J4) is a new attempt: a
// new `submitted` with the next attempt number, on the same row.
//
// The interface is the backend's contract; SQLite (sqlite_journal.cpp) is
// the default and a database server may implement it too. A backend is
// used from several threads of one process and from several processes at
// once; every method is thread-safe and bounded in time (a held lock is
// waited for up to kLockWait, then reported, never waited out).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "courier/outcome.hpp"
#include "courier/ref_update.hpp"
#include "courier/result.hpp"
#include "state/state_url.hpp"

namespace courier::journal {

// How long a write waits for another process's lock before it fails.
inline constexpr std::int64_t kLockWaitMs = 2'000;

#define COURIER_JOURNAL_STEP_LIST(X)                                                    \
  X(submitted)        /* intent: what is pushed where, by whom, until when (durable) */ \
  X(claimed)          /* the dispatch claim won: a child may exist from here */         \
  X(dispatched)       /* the child exists: its pid, start time, boot id */              \
  X(advertised)       /* the ref's old id the remote advertised */                      \
  X(post_started)     /* the POST may begin (durable before the child is told) */       \
  X(answered)         /* a report-status for the ref was read */                        \
  X(revoke_requested) /* the caller (or the host) revoked; with its cause */            \
  X(finished)         /* the outcome (the row is closed) */                             \
  X(stop_confirmed)   /* recovery later confirmed a retained child's stop */

COURIER_WORD_ENUM(Step, COURIER_JOURNAL_STEP_LIST);

const char* step_name(Step s);
std::optional<Step> step_from_name(std::string_view name);

// A process, as recovery can tell it from a later one with the same pid
// (J3): pid + start time (clock ticks after boot, /proc/PID/stat) + boot id.
struct ProcessIdentity {
  std::int64_t pid = 0;
  std::uint64_t start_ticks = 0;
  std::string boot_id;
  bool operator==(const ProcessIdentity&) const = default;
};

// What was asked: written with `submitted`, before anything else (J1).
struct Submission {
  std::string id;
  int attempt = 1;
  std::string repo;
  std::string remote;  // canonical, redacted (no user information, H2)
  std::string lane;
  // The first update's ref and object, and this attempt's expect_old for it
  // (a compare-and-swap re-delivery's: the journalled old id): the row's
  // columns, what a reader of one ref reads.
  std::string ref;
  std::string oid;
  std::optional<std::string> expect_old;
  // The whole set as the request gave it (J4's identity, set_identity): its
  // updates in the request's order, each with its update rule and its own
  // expect_old; whether they move together (the resolved atomic choice);
  // the push options in order. Journalled in the row's `request` column. A
  // row written before sets were recorded has none: it reads as one update
  // from ref/oid/expect_old (legacy_set true, its update rule not known).
  std::vector<RefUpdate> updates;
  bool atomic = false;
  std::vector<std::string> push_options;
  bool legacy_set = false;
  // The deadline as a wall-clock instant (a monotonic one means nothing
  // after a reboot), with the boot it was fixed in.
  std::int64_t deadline_unix_ms = 0;
  ProcessIdentity submitter;
  // The host's note for this attempt (DeliveryRequest::journal_note): the
  // text of a JSON object in compact form, or "" (none; and every
  // submission journalled before notes existed).
  std::string note;
  // The host that submitted it (ExecutorOptions::host_id, default the host
  // name): "" for a journal written before hosts were recorded.
  std::string host;
};

// One transition. `detail` is a JSON object (text) whose fields depend on
// the step: submitted {the submission}, dispatched {child_pid,
// child_start_ticks, child_boot_id}, advertised {old_oid}, post_started
// {old_oid}, answered {remote_effect}, revoke_requested {cause, claimed},
// finished {the outcome: see outcome_detail()}, stop_confirmed {by}.
struct Entry {
  Step step = Step::submitted;
  int attempt = 1;
  std::int64_t at_unix_ms = 0;
  std::string detail = "{}";
};

// A delivery as the journal knows it.
struct Record {
  Submission submission;       // of the latest attempt
  std::vector<Entry> entries;  // every attempt's, oldest first
  bool finished = false;       // the latest attempt has a finished entry
  // The latest attempt's entries only.
  std::vector<Entry> latest() const;
  // The latest attempt's last entry of this step, if any.
  std::optional<Entry> last(Step s) const;
};

class Journal {
 public:
  virtual ~Journal() = default;

  // Where it is, for messages (a path or a redacted URL).
  virtual const std::string& where() const = 0;

  // Records a new delivery (attempt 1) or the next attempt of a finished
  // one, with its `submitted` entry, synced before it returns (J1).
  // Errors: journal_conflict (the id exists and this is not the attempt
  // after its finished one: another process submitted it too), journal_failed.
  virtual Result<void> submit(const Submission& s, std::int64_t at_unix_ms) = 0;

  // Appends one entry to the delivery's current attempt. durable: synced
  // before it returns (post_started; a revocation before dispatch).
  // A `finished` entry closes the attempt and is refused with
  // journal_conflict if it is already closed (so the process that ran a
  // delivery and a recovery never both finish it); so is any entry for an
  // attempt that is not the current one. Errors: journal_conflict,
  // journal_failed (the id is unknown, or the write failed).
  virtual Result<void> append(const std::string& id, const Entry& e, bool durable) = 0;

  // The delivery, or nullopt if the id was never submitted. Errors: journal_failed.
  virtual Result<std::optional<Record>> find(const std::string& id) = 0;
  // The most recently submitted deliveries, newest first. Errors: journal_failed.
  virtual Result<std::vector<Record>> recent(std::size_t limit) = 0;
  // Every delivery whose latest attempt has no finished entry, and every
  // finished one whose outcome retained its seat (is_unconfirmed) and has
  // no stop_confirmed entry since. Errors: journal_failed.
  virtual Result<std::vector<Record>> open_work() = 0;
};

// Opens (creating when absent) the SQLite journal at `path`: its directory
// is created 0700 when missing, and must otherwise be a real directory of
// this user with no group or other write; the file is created 0600, opened
// without following a symlink, and must belong to this user. WAL mode.
// Errors: journal_failed naming the path and why (corrupt, read-only, a
// lock held past kLockWaitMs, not ours, a symlink).
Result<std::unique_ptr<Journal>> open_sqlite(const std::string& path);

// Opens an existing SQLite journal to read it (`log`, `show`): nothing is
// created, neither the file nor its directory nor the schema; SQLite may
// create the -wal and -shm files beside it. Errors: journal_failed (no such
// file, not a journal, unreadable).
Result<std::unique_ptr<Journal>> open_sqlite_read_only(const std::string& path);

// Opens the journal in the PostgreSQL database `url` names (connecting, and
// creating or migrating the schema: pg::migrate), as one fleet's shared
// journal. Every call is bounded (kLockWaitMs, connecting included) and a
// lost connection is made again once, at the next call or, before its
// commit was sent, within the same call. `application_name` is the
// session's name on the server ("git-courier/<host>/<instance>"). The
// connection is made by `connect_until` (a CLOCK_MONOTONIC instant; 0: within
// kLockWaitMs from now, the bound of every operation) and never later than
// kLockWaitMs from now; creating or migrating the schema, once connected, by
// kSchemaOpenMs from now.
// Errors: database_failed (unreachable, refused, timed out: the server named
// redacted), invalid_argument (a schema newer than this program).
Result<std::unique_ptr<Journal>> open_postgres(const state::StateUrl& url, const std::string& application_name,
                                               std::int64_t connect_until = 0);

// Creating or migrating the schema at open, once connected (a first start
// creates every table).
inline constexpr std::int64_t kSchemaOpenMs = 10'000;

// The journal a state URL names: SQLite (open_sqlite) or PostgreSQL
// (open_postgres, connected by `connect_until`). The one place the backend is
// chosen. Errors: theirs.
Result<std::unique_ptr<Journal>> open_state(const state::StateUrl& url, const std::string& application_name,
                                            std::int64_t connect_until = 0);

// ---- the shared vocabulary of entries (journal_record.cpp) ----------------

// This process (or pid), as recovery will identify it. Errors: os_error.
Result<ProcessIdentity> identify(std::int64_t pid);
// True when the process that `who` names still runs (same pid, same start
// time, same boot) — never by pid alone (J3).
bool is_alive(const ProcessIdentity& who);
// This boot's id (/proc/sys/kernel/random/boot_id), or "" if unreadable.
std::string boot_id();
// Milliseconds since the epoch (CLOCK_REALTIME).
std::int64_t wall_now_ms();

// The outcome as a finished entry's detail, and back. outcome_from_detail
// restores what a replay needs (kind, reason, remote_effect, old_oid,
// bytes_sent, objects, observed_after, kill_domain, scratch_kept, ...);
// monotonic timings are not restored. Errors: journal_failed (not an outcome).
std::string outcome_detail(const Outcome& o);
Result<Outcome> outcome_from_detail(std::string_view detail);

// A field of an entry's detail as text ("" when absent or not a string).
std::string detail_text(std::string_view detail, std::string_view field);
// Who revoked (J5), from a cause's name (a revoke_requested entry's
// "cause", a finished outcome's "revoked_by"); an entry written before
// causes were named has only the words, and the cause is read from them.
RevokeCause revoke_cause_in(const std::string& name, const std::string& words);
// A boolean field of an entry's detail; nullopt when absent or not a boolean.
std::optional<bool> detail_flag(std::string_view detail, std::string_view field);

// The `submitted` entry's detail: the submission as a JSON object (id,
// attempt, repo, remote, lane, ref, oid, expect_old, deadline_unix_ms,
// submitter {pid, start_ticks, boot_id}, note {the host's object} when
// there is one, and host when it is named).
std::string submission_detail(const Submission& s);
// The set a submission carries, as its `request` column holds it: {"updates":
// [{ref, oid, update, expect_old}], "atomic", "push_options"}.
std::string request_detail(const Submission& s);
// The set from a `request` column into `s` (updates, atomic, push_options);
// null or unreadable (a row written before sets were recorded): one update
// from s.ref/s.oid/s.expect_old, legacy_set.
void read_request(const std::optional<std::string>& column, Submission& s);
// J4's identity of a submission: its updates sorted by ref (ref, oid,
// update rule, expect_old), its push options in order and its atomic
// choice, as one canonical text. Two submissions are the same request when
// their identities are equal (a legacy row: when ref and oid are).
std::string set_identity(const Submission& s);
// Whether two submissions name the same set (J4): their identities, or for
// a legacy row (no set recorded) the one ref and object. An update asked in
// the default rule (fast-forward, no expect_old) matches the known update
// of its ref and object in any rule: a retry need not repeat --force.
bool same_set(const Submission& known, const Submission& asked);

// The note of a `submitted` entry's detail, in compact form ("" when it has
// none, or it is not an object).
std::string note_of_detail(std::string_view detail);
// A host's note checked and made compact: "" for "", else the text must be
// one JSON object of at most `max_bytes`, nested at most 32 levels deep (so
// the documents that carry it stay under wire::kMaxJsonDepth), without a key
// twice in one object. Errors: invalid_argument (why).
Result<std::string> compact_note(std::string_view note, std::size_t max_bytes);

}  // namespace courier::journal
