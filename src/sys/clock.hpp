// clock.hpp — the one clock deadlines are measured on: CLOCK_MONOTONIC,
// system-wide on Linux, so a parent and its child agree on an absolute instant.
#pragma once

#include <cstdint>

namespace courier::sys {

using MonoNs = std::int64_t;

MonoNs mono_now_ns();

// "No instant": waits until an event, never a clock.
inline constexpr MonoNs kForever = INT64_MAX;

inline constexpr MonoNs kNsPerMs = 1'000'000;
inline double ns_to_ms(MonoNs ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace courier::sys
