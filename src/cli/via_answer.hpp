// via_answer.hpp — reading the service's answers to `push --via`: the
// submission's answer, a refusal, a revocation's answer and one event line.
//
// The service is another process, perhaps one that is not git-courier at
// all (a socket anyone could bind): every answer is read through the one
// bounded JSON reader (wire/json.hpp), and every field is checked for its
// type before it is used, so no answer can end the command other than with
// an error. Pure: no I/O, so each reader is fuzzed (fuzz/fuzz_answer.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "courier/courier.hpp"
#include "courier/result.hpp"
#include "report/event_json.hpp"
#include "report/outcome_json.hpp"

namespace courier::cli {

// What a refusal's body says ({"error": {"code", "message", "field"}}),
// told with its status: "MESSAGE (STATUS CODE, field F)", or "the service
// answered STATUS" when the body is not such a document.
std::string refusal_message(long status, std::string_view body);

// The answer to the submission (200 or 202): the delivery's id, and, when
// the journal had already finished that id (200), its outcome.
struct SubmitAnswer {
  std::string id;
  std::optional<report::DecodedOutcome> replayed;
};
Result<SubmitAnswer> read_submit_answer(long status, std::string_view body);

// The `result` word of a revocation's answer ("?" when there is none).
std::string read_revoke_answer(std::string_view body);

// One line of a delivery's events, read by the event table's decoder
// (report/event_json.hpp): `event` holds what a pending or progress event
// says; `outcome` is set for `finished` (the decoded outcome, or why it
// could not be decoded).
using ServiceEvent = report::DecodedEvent;
// Nullopt: not an event (not a JSON object, or no seq and event).
std::optional<ServiceEvent> read_event_line(std::string_view line);

}  // namespace courier::cli
