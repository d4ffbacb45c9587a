// outcome_json.hpp — the outcome as one JSON document, and back: what
// `git-courier push --json` prints, what the service returns as a
// delivery's "outcome", and what `push --via` turns back into a
// courier::Outcome to print as a local push would; and the journal's form
// of the same outcome. One owner for the document, so that the four cannot
// drift (docs/service.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "courier/outcome.hpp"
#include "courier/result.hpp"

namespace courier::report {

// What the document says besides the outcome itself: the delivery as
// requested (the remote canonical, never with user information) and what to
// try next (nullopt or empty: nothing to say).
struct OutcomeFacts {
  std::string remote;
  std::string ref;
  std::string oid;
  std::optional<std::string> hint;
};

// The document as a JSON value (to embed in another document: the
// service's responses and events). Its fields are listed in
// docs/operations.md ("--json").
nlohmann::json outcome_to_json(const Outcome& o, const OutcomeFacts& facts);

// The same as text: one JSON object, no trailing newline. Invalid UTF-8 in
// a text field is replaced, never an error.
std::string outcome_json(const Outcome& o, const OutcomeFacts& facts);

// What a document gives back. The outcome carries every field the document
// has: its instants are synthetic (the document has durations, not
// instants), chosen so that the same durations come out, so that
// outcome_json(decoded) is the document it was decoded from.
struct DecodedOutcome {
  Outcome outcome;
  OutcomeFacts facts;
};

// Errors: invalid_argument naming the field that is missing, of the wrong
// type, or an unknown outcome, remote_effect or stop_failure name.
Result<DecodedOutcome> outcome_from_json(const nlohmann::json& doc);
// Errors: invalid_argument (not JSON, or as above).
Result<DecodedOutcome> outcome_from_json(std::string_view text);

// The journal's form of the same outcome: a `finished` entry's detail
// (journal::outcome_detail). Flat, with what survives a restart: no
// timings, no remote messages; empty text is "" and an absent optional is
// left out. Kept as journals have always held it, so that every row
// written before reads the same.
std::string outcome_record(const Outcome& o);
// Lenient (a row may come from an older or newer version): a missing or
// mistyped field is its default; the kind and the remote_effect must be
// known. Errors: invalid_argument saying why, as "it ..." for not JSON.
Result<Outcome> outcome_from_record(std::string_view detail);

// The cause a revocation names, or for a row written before causes were
// named (name empty or unknown), the cause its words begin with.
RevokeCause revoke_cause_in(const std::string& name, const std::string& words);

}  // namespace courier::report
