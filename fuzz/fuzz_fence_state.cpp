// fuzz_fence_state.cpp — libFuzzer target: arbitrary bytes as the token
// verifier's fence-state file (auth/fence_text.*), a fence raised in it.
// Oracles: nothing crashes or throws; the fence recorded before is never
// lowered; state written back reads again with the repository at exactly
// the fence raised to, and raising the same fence again changes nothing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "auth/fence_text.hpp"

using namespace courier;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  // The first byte picks the fence (0..255), the rest is the file.
  const std::int64_t fence = data[0];
  const std::string_view state(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string repo = "https://h/r";
  auto r = auth::raise_fence_in(state, repo, fence, "fence state");
  if (!r) return 0;
  if (r->before && *r->before >= fence) {
    if (r->text) std::abort();  // a higher or equal record is never rewritten
    return 0;
  }
  if (!r->text) std::abort();
  auto again = auth::raise_fence_in(*r->text, repo, fence, "fence state");
  if (!again || again->before != fence || again->text) std::abort();
  return 0;
}
