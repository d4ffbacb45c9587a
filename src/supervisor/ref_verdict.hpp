// ref_verdict.hpp — each ref's end, as the parent can vouch for it: what a
// standing result says of a ref is taken only when it agrees with what was
// sent (T4), and each ref's remote_effect follows from its status and from
// whether the POST was cleared (J2 per ref). Pure.
#pragma once

#include <optional>
#include <string>

#include "courier/outcome.hpp"
#include "protocol/messages.hpp"

namespace courier::supervisor {

// Whether a ref's command went in a POST the parent cleared: the POST check
// named it (PhasesSeen marks it unknown) and post_started was reached.
bool ref_sent(const RefOutcome& r, const Outcome& observed);

// A standing result of a remote answer (delivered, up_to_date, rejected)
// against what was sent, once a POST was cleared: every sent ref must have
// the report's word (ok or ng), and no unsent ref may have one (nor be
// unknown). The first ref it misstates, in words for the outcome's reason;
// nullopt when it agrees (or no POST was cleared: then every ref's effect
// is none, settle_refs).
std::optional<std::string> misreported_ref(const Outcome& observed, const protocol::ResultMsg& r);

// A standing result's word for each ref. After a remote answer, each ref's
// status and reason as the result says (misreported_ref agreed). After a
// failure, a sent ref stays unknown (no report about it is vouched for) and
// an unsent ref takes the result's word unless it claims a report (ok, ng)
// or a send (unknown): then it was not attempted.
void take_ref_statuses(const protocol::ResultMsg& r, bool remote_answer, Outcome& out);

// The last step of every verdict: a ref marked sent whose POST was never
// cleared was not attempted; each ref's remote_effect from its status (ok:
// applied, ng: refused, unknown: possible, else none; every ref none when
// no POST was cleared, J2), and the delivery's
// as combined_remote_effect of its refs (remote_effect_of for an outcome
// without refs).
void settle_refs(Outcome& out);

}  // namespace courier::supervisor
