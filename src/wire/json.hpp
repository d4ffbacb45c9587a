// json.hpp — the one way the product reads JSON: bounded in size and depth,
// duplicate keys refused.
//
// Everything the product parses as JSON — frames, API bodies, journal rows,
// the verifier's fence state, the service's answers to `push --via` — may
// come from someone hostile (a child, an API caller, a writer of the shared
// database). nlohmann/json builds, copies, compares and prints nested values
// by recursion, so a value nested 100,000 deep exhausts the stack of
// whatever touches it next; and it keeps the last of two equal keys, so
// {"repo":"a","repo":"/etc"} reads as /etc where another reader sees a.
// parse_json checks the text first (size, then depth and keys in one pass
// that builds nothing) and only then builds the value, so no value deeper
// than kMaxJsonDepth ever exists. nlohmann/json's exceptions end here.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "courier/result.hpp"

namespace courier::wire {

// At most this many bytes of JSON text are read (the frame cap, MAX_FRAME:
// nothing the product writes is larger).
inline constexpr std::size_t kMaxJsonBytes = 1024 * 1024;
// At most this many arrays and objects nested in one another (the product's
// own documents use fewer than 8; a host's journal note, at most 32 deep,
// is carried at most 5 levels down).
inline constexpr std::size_t kMaxJsonDepth = 64;

// The JSON value in `text`, or an error: Errc::json_too_large,
// Errc::json_too_deep, Errc::duplicate_key (a key twice in one object, at
// any depth) or Errc::malformed_json. `what` names the text in the message
// ("fence state /x", "request body"); keys from the text are shown escaped
// and cut.
Result<nlohmann::json> parse_json(std::string_view text, std::string_view what);

// How deep arrays and objects nest in `value` (a scalar is 0, {} and [] are
// 1): for a caller that nests one document inside another and must keep the
// whole under kMaxJsonDepth. Recursive, so only for values parse_json made.
std::size_t json_depth(const nlohmann::json& value);

}  // namespace courier::wire
