// outcome_refs.cpp — Outcome::refs for outcomes no result named (outcome_refs.hpp).
#include "seat/outcome_refs.hpp"

namespace courier::seat {

namespace {

RefStatus status_from(const Outcome& o) {
  switch (o.remote_effect) {
    case RemoteEffect::applied:
      return RefStatus::ok;
    case RemoteEffect::refused:
      return RefStatus::ng;
    case RemoteEffect::possible:
    case RemoteEffect::mixed:
      return RefStatus::unknown;
    case RemoteEffect::none:
      break;
  }
  if (o.kind == OutcomeKind::up_to_date) return RefStatus::up_to_date;
  if (o.kind == OutcomeKind::rejected) return RefStatus::rejected;
  return RefStatus::not_attempted;
}

}  // namespace

std::vector<RefUpdate> updates_of(const DeliveryRequest& req) {
  if (!req.updates.empty()) return req.updates;
  if (req.ref.empty()) return {};
  return {RefUpdate{req.ref, req.oid, req.update, req.expect_old}};
}

void fill_refs(Outcome& o, const std::vector<RefUpdate>& updates) {
  if (!o.refs.empty()) return;
  const RefStatus status = status_from(o);
  const bool with_reason = status == RefStatus::ng || status == RefStatus::rejected;
  for (const RefUpdate& u : updates) {
    RefOutcome r;
    r.ref = u.ref;
    r.oid = u.oid;
    r.status = status;
    r.remote_effect = ref_remote_effect(status);
    if (with_reason) r.reason = o.reason;
    if (o.refs.empty()) r.old_oid = o.old_oid;
    o.refs.push_back(std::move(r));
  }
}

}  // namespace courier::seat
