// outcome.cpp — outcome names and the release rule.
#include "courier/outcome.hpp"

namespace courier {

const char* outcome_name(OutcomeKind k) {
  switch (k) {
#define X(n) case OutcomeKind::n: return #n;
    X(delivered) X(up_to_date) X(rejected) X(failed) X(cancelled_no_dispatch) X(revoked)
    X(deadline_killed) X(auth_failed) X(transport_failed) X(protocol_fault) X(spawn_failed)
    X(lane_poisoned) X(unreaped) X(wait_failed) X(cleanup_unbounded) X(cleanup_unobserved)
    X(domain_populated)
#undef X
  }
  return "unknown";
}

bool is_unconfirmed(OutcomeKind k) {
  switch (k) {
    case OutcomeKind::unreaped:
    case OutcomeKind::wait_failed:
    case OutcomeKind::cleanup_unbounded:
    case OutcomeKind::cleanup_unobserved:
    case OutcomeKind::domain_populated:
      return true;
    default:
      return false;
  }
}

SeatDisposition release_rule(OutcomeKind k) {
  return is_unconfirmed(k) ? SeatDisposition::retain : SeatDisposition::release;
}

std::optional<MonoNs> Outcome::deadline_overrun() const {
  if (kind != OutcomeKind::deadline_killed || timings.kill == 0) return std::nullopt;
  return timings.kill - deadline;
}

}  // namespace courier
