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
    case OutcomeKind::cancel_uncertain:
      return true;
    default:
      return false;
  }
}

std::optional<OutcomeKind> outcome_from_name(const std::string& name) {
#define COURIER_OUTCOME_LIST_PARSE(n) \
  if (name == #n) return OutcomeKind::n;
  COURIER_OUTCOME_LIST(COURIER_OUTCOME_LIST_PARSE)
#undef COURIER_OUTCOME_LIST_PARSE
  return std::nullopt;
}

const char* remote_effect_name(RemoteEffect e) {
  switch (e) {
#define COURIER_REMOTE_EFFECT_NAME(n) \
  case RemoteEffect::n:               \
    return #n;
    COURIER_REMOTE_EFFECT_LIST(COURIER_REMOTE_EFFECT_NAME)
#undef COURIER_REMOTE_EFFECT_NAME
  }
  return "unknown";
}

std::optional<RemoteEffect> remote_effect_from_name(const std::string& name) {
#define COURIER_REMOTE_EFFECT_PARSE(n) \
  if (name == #n) return RemoteEffect::n;
  COURIER_REMOTE_EFFECT_LIST(COURIER_REMOTE_EFFECT_PARSE)
#undef COURIER_REMOTE_EFFECT_PARSE
  return std::nullopt;
}

const char* revoke_cause_name(RevokeCause c) {
  switch (c) {
#define COURIER_REVOKE_CAUSE_NAME(n) \
  case RevokeCause::n:               \
    return #n;
    COURIER_REVOKE_CAUSE_LIST(COURIER_REVOKE_CAUSE_NAME)
#undef COURIER_REVOKE_CAUSE_NAME
  }
  return "unknown";
}

std::optional<RevokeCause> revoke_cause_from_name(const std::string& name) {
#define COURIER_REVOKE_CAUSE_PARSE(n) \
  if (name == #n) return RevokeCause::n;
  COURIER_REVOKE_CAUSE_LIST(COURIER_REVOKE_CAUSE_PARSE)
#undef COURIER_REVOKE_CAUSE_PARSE
  return std::nullopt;
}

bool revocation_is_final(RevokeCause c) { return c == RevokeCause::caller || c == RevokeCause::authority; }

SeatDisposition release_rule(OutcomeKind k) {
  return is_unconfirmed(k) ? SeatDisposition::retain : SeatDisposition::release;
}

std::optional<MonoNs> Outcome::deadline_overrun() const {
  if (kind != OutcomeKind::deadline_killed || timings.kill == 0) return std::nullopt;
  return timings.kill - deadline;
}

}  // namespace courier
