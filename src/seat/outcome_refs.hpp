// outcome_refs.hpp — Outcome::refs for an outcome no child's result named:
// decided before dispatch (refused, cancelled, expired, a poisoned lane),
// replayed from a journal row written before refs were recorded, or
// finished by recovery.
#pragma once

#include <vector>

#include "courier/courier.hpp"
#include "courier/outcome.hpp"
#include "courier/ref_update.hpp"

namespace courier::seat {

// The updates a request names: its `updates`, or its one-update form (ref,
// oid, update, expect_old), or none when it names no ref at all.
std::vector<RefUpdate> updates_of(const DeliveryRequest& req);

// Fills o.refs from `updates` when it names none, each ref's status read
// from the delivery's own (the only form a one-ref outcome had before refs
// were recorded): applied -> ok, refused -> ng, possible -> unknown, none ->
// up_to_date / rejected (the kind's word) or not_attempted; the first ref
// takes o.old_oid. An outcome decided before dispatch (remote_effect none,
// neither up_to_date nor rejected) thus names every ref not attempted.
void fill_refs(Outcome& o, const std::vector<RefUpdate>& updates);

}  // namespace courier::seat
