// outcome.cpp — outcome names and the release rule.
#include "courier/outcome.hpp"

namespace courier {

const char* outcome_name(OutcomeKind k) {
  switch (k) {
#define COURIER_OUTCOME_LIST_NAME(n) \
  case OutcomeKind::n:               \
    return #n;
    COURIER_OUTCOME_LIST(COURIER_OUTCOME_LIST_NAME)
#undef COURIER_OUTCOME_LIST_NAME
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
