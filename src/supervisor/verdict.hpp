// verdict.hpp — the verdict: what a delivery ended as, decided from the
// facts the supervisor observed. Pure functions: no process, no descriptor,
// no clock. The drive loop gathers the facts; these decide (S2, S3, P1, D1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "protocol/messages.hpp"
#include "supervisor/kill_domain.hpp"
#include "courier/outcome.hpp"
#include "sys/clock.hpp"

namespace courier::supervisor {

// Confirming the stop failed: the outcome kind it makes, and why.
struct Unconfirmed {
  OutcomeKind kind = OutcomeKind::cleanup_unobserved;
  std::string reason;
};

// What the drive loop has observed so far: the outcome as it is recorded,
// and the first failure to confirm the stop, which ends supervision.
struct Observed {
  Outcome out;
  std::optional<Unconfirmed> unconfirmed;  // the first one wins
  bool done = false;

  void unconfirm(OutcomeKind kind, const std::string& why) {
    if (!unconfirmed) unconfirmed = Unconfirmed{kind, why};
    done = true;
  }
};

// The confirmed stop (S2): the leader reaped by us, end-of-file on both of
// its pipes and, when it ran in a cgroup, the cgroup empty. Nothing less.
bool stop_confirmed(const ChildFacts& child);

// What the one bound timer means when it fires.
struct BoundFacts {
  ChildFacts child;         // as observed so far
  bool reaped = false;      // the kill domain reaped its leader
  bool killed = false;      // a SIGKILL was sent to the domain
  bool result = false;      // the child sent its result
  std::string cgroup_path;  // its cgroup, when it has one
  sys::MonoNs reap_bound = 0;
  sys::MonoNs eof_bound = 0;
};
enum class BoundAction { none, stop_after_result, unconfirmed };
struct BoundVerdict {
  BoundAction action = BoundAction::none;
  Unconfirmed unconfirmed;  // when action is unconfirmed
};
// After the reap: EOF_BOUND spent without end-of-file on a pipe, or with the
// cgroup still populated, is unconfirmed (S3). After a kill with no reap:
// REAP_BOUND spent is unreaped. After a result with no kill: the grace is
// spent, and the child is stopped.
BoundVerdict bound_expired(const BoundFacts& facts);

// Everything the end of supervision decides from.
struct StopFacts {
  Outcome observed;                           // child facts, timings, hello, stderr counts so far
  std::optional<Unconfirmed> unconfirmed;     // confirming the stop failed (first failure)
  std::optional<std::string> fault;           // the first protocol fault
  std::optional<protocol::ResultMsg> result;  // the child's result, if one came
  sys::MonoNs result_ns = 0;                  // when it came
  StopCause cause = StopCause::none;          // why the domain was first killed
  sys::MonoNs deadline = 0;
  sys::MonoNs lease_bound = 0;                  // the lane's lease bound at the end (0: no lease)
  std::string revoke_reason;                    // when revoked
  RevokeCause revoke_by = RevokeCause::caller;  // when revoked: who asked (J5)
  std::optional<std::uint64_t> upload_done;     // the last upload progress (bytes)
  bool exiting_at_kill = false;                 // the leader was already dying at the first kill
  bool result_after_revocation = false;         // the result came after the delivery's revocation (J5)
  std::string job_refused;                      // cause job_refused: why the job never went
};

// The outcome: unconfirmed first (seat retained, S3; cancel_uncertain when
// a revocation caused the stop), then a protocol fault that came before any
// kill of ours, then the child's own result (unless it is a failure
// reported at or after a deadline or lease kill: that is the kill's doing),
// then the first stop cause (J5: our own kill wins over what it caused, a
// frame cut short by it included). A child that died by a signal this
// process did not send is child_signalled, never a protocol fault, with the
// signal and a hint; a result that does not stand still gives its facts
// (old id, pack engine, bytes, phases). A
// child that died of SIGKILL on its own at or after its lease bound was
// killed by its own lease timer (L2): that is the lease's stop too, and
// like the parent's kill at the bound (L1) it ends `revoked` with
// revoke_cause kLeaseLostCause. Bytes sent
// fall back to the last upload progress (0 when nothing was sent). Every
// outcome says its remote_effect (J2) and the kill domain it ran in.
Outcome verdict(StopFacts facts);

// J2: what the remote may have done. none when the POST was never cleared
// (timings.post_started == 0); applied / refused only from a report the
// child read for the ref (delivered / rejected after the POST began);
// possible otherwise.
RemoteEffect remote_effect_of(const Outcome& decided);

// The outcome a child's result status names.
OutcomeKind kind_from_status(wire::DeliveryStatus status);

}  // namespace courier::supervisor
