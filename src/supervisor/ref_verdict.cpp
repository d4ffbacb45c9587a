// ref_verdict.cpp — each ref's end as the parent vouches for it (ref_verdict.hpp).
#include "supervisor/ref_verdict.hpp"

#include "supervisor/verdict.hpp"

namespace courier::supervisor {

namespace {

bool reported(RefStatus s) { return s == RefStatus::ok || s == RefStatus::ng; }

std::string says(const protocol::ResultMsg& r) { return std::string(wire::status_word(r.status)); }

}  // namespace

bool ref_sent(const RefOutcome& r, const Outcome& observed) {
  return r.status == RefStatus::unknown && observed.timings.post_started != 0;
}

std::optional<std::string> misreported_ref(const Outcome& observed, const protocol::ResultMsg& r) {
  // No POST was cleared: nothing could be sent, and settle_refs gives every
  // ref none whatever the result says (J2).
  if (observed.timings.post_started == 0) return std::nullopt;
  if (r.refs.size() != observed.refs.size()) {
    return "the child's result names " + std::to_string(r.refs.size()) + " refs, the delivery has " +
           std::to_string(observed.refs.size()) + " (T4)";
  }
  for (std::size_t i = 0; i < r.refs.size(); ++i) {
    const RefOutcome& seen = observed.refs[i];
    const RefStatus word = r.refs[i].status;
    if (ref_sent(seen, observed) && !reported(word)) {
      return "the child's result says " + says(r) + " but has no report for " + seen.ref + " (" +
             std::string(enum_word(word)) + "), whose command was sent: T4 binds every sent ref to its report";
    }
    if (!ref_sent(seen, observed) && (reported(word) || word == RefStatus::unknown)) {
      return "the child's result says " + std::string(enum_word(word)) + " for " + seen.ref +
             ", whose command was not in a POST the parent cleared (T4)";
    }
  }
  return std::nullopt;
}

void take_ref_statuses(const protocol::ResultMsg& r, bool remote_answer, Outcome& out) {
  for (std::size_t i = 0; i < r.refs.size() && i < out.refs.size(); ++i) {
    RefOutcome& o = out.refs[i];
    const protocol::RefResult& x = r.refs[i];
    if (!remote_answer && ref_sent(o, out)) continue;
    const bool claims_send = reported(x.status) || x.status == RefStatus::unknown;
    o.status = !remote_answer && claims_send ? RefStatus::not_attempted : x.status;
    o.reason = x.reason.value_or("");
  }
}

void settle_refs(Outcome& out) {
  if (out.refs.empty()) {
    out.remote_effect = remote_effect_of(out);
    return;
  }
  const bool cleared = out.timings.post_started != 0;
  for (RefOutcome& r : out.refs) {
    if (r.status == RefStatus::unknown && !cleared) r.status = RefStatus::not_attempted;
    // J2: without a cleared POST nothing the remote could apply was sent.
    r.remote_effect = cleared ? ref_remote_effect(r.status) : RemoteEffect::none;
  }
  out.remote_effect = combined_remote_effect(out.refs);
}

}  // namespace courier::supervisor
