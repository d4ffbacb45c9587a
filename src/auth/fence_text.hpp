// fence_text.hpp — the verifier's fence state as text: a JSON object from
// repository to the highest fence accepted (docs/auth.md "Fences"), raised
// for one token. Pure (the file's locking and I/O are the verifier's), so
// that every file a hostile or broken disk could hold is fuzzed
// (fuzz/fuzz_fence_state.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "courier/result.hpp"

namespace courier::auth {

struct FenceRaise {
  std::optional<std::int64_t> before;  // the repository's fence in the text (nullopt: none)
  std::optional<std::string> text;     // the state to write back; nullopt: unchanged
};

// Reads `state` ("" is an empty state) through the one bounded JSON reader:
// text over wire::kMaxJsonBytes, nested past wire::kMaxJsonDepth, with a
// repository twice ({"r":7,"r":2} must not count the later, lower fence),
// not an object, or whose entry for `repository` is not an integer, is an
// error, and the caller refuses (fail closed). `what` names the state in
// the message.
Result<FenceRaise> raise_fence_in(std::string_view state, const std::string& repository, std::int64_t fence,
                                  const std::string& what);

}  // namespace courier::auth
