// output.hpp — how a finished delivery is told: the exit code, one human
// line, and the --json object (the contract scripts rely on).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/ref_summary.hpp"
#include "courier/courier.hpp"
#include "courier/outcome.hpp"

namespace courier::cli {

struct DeliveryFacts {
  std::string remote;
  std::string ref;
  std::string oid;
  std::string auth;  // the --auth given (its spelling: "none", "key:FILE", ...), for hints
  // The hint as already told (an outcome document read back from the
  // service, `push --via`): hint_for returns it instead of its own.
  std::optional<std::string> hint;
  // The remote's ref was moved to a commit that does not descend from its
  // old one (--force): said as git says it, "forced update".
  bool forced = false;
  // A push of several refs or of a deletion: each ref as asked, in order
  // (their outcomes are told one line each, as git's summary; ref and oid
  // above are the first's). Empty: a push of one ref.
  std::vector<AskedRef> asked;
};

int exit_code_for(OutcomeKind kind);
std::string human_line(const Outcome& o, const DeliveryFacts& facts);
// A read-back, for people: what the remote's ref was, when, and whether it
// is this delivery's object (an observation, never a verdict).
std::string observed_line(const ObservedAfter& seen);
// A wall-clock instant for people: "2026-12-03 03:10:12 UTC".
std::string human_time(std::int64_t unix_ms);
// What a delivery killed at its deadline was doing, as far as the outcome
// shows it: "waiting for the lane", "the ref advertisement", "packing
// objects", "the upload (the POST had begun)", ...
std::string interrupted_phase(const Outcome& o);

// What to try next, for an outcome a person can do something about (401
// or 403: which --auth was used and what else there is). Empty: none.
std::string hint_for(const Outcome& o, const DeliveryFacts& facts);

// One JSON object, no trailing newline: the outcome document
// (report/outcome_json.hpp) with this command's hint.
std::string json_report(const Outcome& o, const DeliveryFacts& facts);

// A usage error as --json reports it: {"outcome":"usage","message":...}
// (exit code kExitUsage). One JSON object, no trailing newline.
std::string json_usage(const std::string& message);
// The same with every refused field of a request: "errors", a list of
// {"field", "code", "message"} (the service's error shape).
std::string json_usage(const std::string& message, const FieldErrors& errors);

// `push --via` ended without an outcome because the service could not take
// or follow the delivery (not reachable, full, draining, lost):
// {"outcome":"service_unavailable","message":...,"retry_after":N|null}
// (exit code kExitFailed). One JSON object, no trailing newline.
std::string json_service_unavailable(const std::string& message, std::optional<long> retry_after);

// `push --via` got an outcome that is not for the delivery it asked for
// (another id, ref, remote or object): {"outcome":"service_mismatch",
// "message":...} (exit code kExitMismatch). One JSON object, no trailing
// newline.
std::string json_service_mismatch(const std::string& message);

}  // namespace courier::cli
