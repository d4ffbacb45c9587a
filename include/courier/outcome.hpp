// outcome.hpp — (public) what a delivery ended as, and the release rule: the
// one function that decides whether its seat may pass to the next turn.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace courier {

// An instant on CLOCK_MONOTONIC, in nanoseconds (system-wide on Linux, so a
// host, its children and the outcome agree on it).
using MonoNs = std::int64_t;

// The kinds, once: the enum and its names are generated from this list.
#define COURIER_OUTCOME_LIST(X)                                                                   \
  X(delivered)             /* remote reported ok for the ref at the gated id */                   \
  X(up_to_date)            /* remote ref already at the gated id; no POST */                      \
  X(rejected)              /* remote said ng (reason), or expect_old mismatch */                  \
  X(failed)                /* the child reported a local failure (e.g. repository error) */       \
  X(cancelled_no_dispatch) /* revoked before the dispatch claim; no child existed */              \
  X(revoked)               /* revoked while live; killed; stop confirmed */                       \
  X(deadline_killed)       /* deadline reached (before or after dispatch); stop confirmed */      \
  X(auth_failed)           /* 401/403, or no token could be minted */                             \
  X(transport_failed)      /* TLS/connection/redirect/non-200/malformed answer */                 \
  X(protocol_fault)        /* the child broke the protocol; killed; stop confirmed */             \
  X(spawn_failed)          /* no child came to exist */                                           \
  X(lane_poisoned)         /* refused at once: an earlier delivery on this lane is unconfirmed */ \
  /* Unconfirmed: the stop could not be confirmed. Seat retained, lane poisoned. */               \
  X(unreaped)           /* the leader did not exit within REAP_BOUND after SIGKILL */             \
  X(wait_failed)        /* waitid failed: the exit cannot be known */                             \
  X(cleanup_unbounded)  /* end-of-file not seen within EOF_BOUND after the reap */                \
  X(cleanup_unobserved) /* a read error or loop failure: the pipes could not be watched */        \
  X(domain_populated)   /* the kill domain still had members after the kill */

enum class OutcomeKind {
#define COURIER_OUTCOME_LIST_ENUMERATOR(n) n,
  COURIER_OUTCOME_LIST(COURIER_OUTCOME_LIST_ENUMERATOR)
#undef COURIER_OUTCOME_LIST_ENUMERATOR
};

const char* outcome_name(OutcomeKind k);

// True for the five unconfirmed kinds.
bool is_unconfirmed(OutcomeKind k);

enum class SeatDisposition { release, retain };

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
  MonoNs exited = 0;        // leader exit observed
  MonoNs reaped = 0;
  MonoNs confirmed = 0;  // stop confirmed: seat ready (0: never)
  MonoNs revoke = 0;     // revoke() called (0: never)
};

struct Outcome {
  OutcomeKind kind = OutcomeKind::spawn_failed;
  std::string reason;       // one line for people
  bool dispatched = false;  // a child was spawned for this delivery
  bool warm = false;        // the child was spawned ahead of need and then given this job
  ChildFacts child;
  Timings timings;
  MonoNs deadline = 0;
  std::optional<std::string> old_oid;
  std::optional<std::uint64_t> objects;
  std::optional<std::uint64_t> bytes_sent;
  // Phase durations the child measured (milliseconds).
  std::optional<std::uint64_t> advertise_ms;
  std::optional<std::uint64_t> pack_ms;
  std::optional<std::uint64_t> upload_ms;
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
