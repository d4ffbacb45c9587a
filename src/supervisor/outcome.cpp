// outcome.cpp — the outcome table read: words, the release rule, and the
// words of remote effects and revocation causes.
#include "courier/outcome.hpp"

#include <iterator>

namespace courier {

namespace {

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < std::size(kOutcomeRows); ++i) {
    if (static_cast<std::size_t>(kOutcomeRows[i].kind) != i) return false;
  }
  return true;
}
static_assert(rows_in_enum_order(), "kOutcomeRows is indexed by OutcomeKind");

}  // namespace

const OutcomeRow& outcome_row(OutcomeKind k) {
  // The table holds the kinds in the enum's order (both come from one list).
  return kOutcomeRows[static_cast<std::size_t>(k)];
}

const char* outcome_name(OutcomeKind k) { return outcome_row(k).word.data(); }

bool is_unconfirmed(OutcomeKind k) { return outcome_row(k).seat == SeatDisposition::retain; }

std::optional<OutcomeKind> outcome_from_name(const std::string& name) { return enum_from_word<OutcomeKind>(name); }

const char* remote_effect_name(RemoteEffect e) { return enum_word(e).data(); }

std::optional<RemoteEffect> remote_effect_from_name(const std::string& name) {
  return enum_from_word<RemoteEffect>(name);
}

RemoteEffect combined_remote_effect(const std::vector<RefOutcome>& refs) {
  std::optional<RemoteEffect> common;
  for (const RefOutcome& r : refs) {
    // A ref already where it was to go needed nothing: it says nothing of
    // what the delivery did.
    if (r.status == RefStatus::up_to_date) continue;
    if (common && *common != r.remote_effect) return RemoteEffect::mixed;
    common = r.remote_effect;
  }
  return common.value_or(RemoteEffect::none);
}

RemoteEffect ref_remote_effect(RefStatus status) {
  switch (status) {
    case RefStatus::ok:
      return RemoteEffect::applied;
    case RefStatus::ng:
      return RemoteEffect::refused;
    case RefStatus::unknown:
      return RemoteEffect::possible;
    case RefStatus::up_to_date:
    case RefStatus::rejected:
    case RefStatus::not_attempted:
      return RemoteEffect::none;
  }
  return RemoteEffect::possible;
}

const char* revoke_cause_name(RevokeCause c) { return enum_word(c).data(); }

std::optional<RevokeCause> revoke_cause_from_name(const std::string& name) { return enum_from_word<RevokeCause>(name); }

bool revocation_is_final(RevokeCause c) { return c == RevokeCause::caller || c == RevokeCause::authority; }

SeatDisposition release_rule(OutcomeKind k) {
  return is_unconfirmed(k) ? SeatDisposition::retain : SeatDisposition::release;
}

std::optional<MonoNs> Outcome::deadline_overrun() const {
  if (kind != OutcomeKind::deadline_killed || timings.kill == 0) return std::nullopt;
  return timings.kill - deadline;
}

}  // namespace courier
