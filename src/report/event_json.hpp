// event_json.hpp — the service's event lines (GET /v1/deliveries/ID/events,
// NDJSON), both ways: the one table of event words and the fields each
// carries, which the service writes from DeliveryRequest::on_event and
// `push --via` reads back into a DeliveryEvent for the same ProgressView a
// local push feeds (docs/service.md "Events"). A new event is one row.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "courier/courier.hpp"
#include "courier/result.hpp"
#include "report/outcome_json.hpp"

namespace courier::report {

// One event's JSON object without its "seq" (the stream numbers its lines
// when it appends them): {"event": WORD, ...the row's fields}. A finished
// event carries no outcome here: see finished_event.
nlohmann::json event_to_json(const DeliveryEvent& e);
// The service's own first line: the delivery is queued in the service.
inline constexpr std::string_view kQueuedEvent = "queued";
nlohmann::json queued_event();
// The last line: the outcome document (outcome_to_json) under "outcome".
nlohmann::json finished_event(nlohmann::json outcome_document);
// A revocation was asked (journalled with its cause, a RevokeCause word:
// caller, authority, shutdown, lease_lost) and its stop is not yet
// confirmed: the line between DELETE and `finished`.
inline constexpr std::string_view kRevokeRequestedEvent = "revoke_requested";
nlohmann::json revoke_requested_event(std::string_view cause);

// Every line's own fields: its number and the generation that numbered it
// (service/event_numbering.hpp).
inline constexpr std::string_view kLineFields[] = {"seq", "gen"};
// The table of events as the documentation lists it: each word and the
// fields its line carries besides kLineFields, in the table's order.
struct EventDoc {
  std::string_view word;
  std::vector<std::string_view> fields;
};
std::vector<EventDoc> event_table();

// One line read back. `event` holds what the row's fields say; `outcome` is
// set for `finished` (the decoded outcome, or why it could not be decoded).
struct DecodedEvent {
  std::uint64_t seq = 0;
  std::string gen;   // the generation that numbered it ("": none given)
  std::string name;  // the event word as written
  // The executor's event it stands for (event.kind); nullopt: the
  // service's own (kQueuedEvent), or a word this reader does not know.
  std::optional<DeliveryEvent::Kind> kind;
  DeliveryEvent event;
  std::optional<Result<DecodedOutcome>> outcome;
};
// Nullopt: not an event (not a JSON object, no positive seq, or no event).
// An unknown word is an event with its name and nothing else: a newer
// service's event is skipped, never an error.
std::optional<DecodedEvent> event_from_json(std::string_view line);

}  // namespace courier::report
