// clock.hpp — the one clock deadlines are measured on: CLOCK_MONOTONIC,
// system-wide on Linux, so a parent and its child agree on an absolute instant.
#pragma once

#include <cstdint>

namespace courier::sys {

using MonoNs = std::int64_t;

MonoNs mono_now_ns();

// Milliseconds since the epoch (CLOCK_REALTIME): for records that outlive
// this boot (the journal), never for a deadline or a wait.
std::int64_t wall_now_ms();

// "No instant": waits until an event, never a clock.
inline constexpr MonoNs kForever = INT64_MAX;

inline constexpr MonoNs kNsPerMs = 1'000'000;

// The instant `ms` milliseconds after `from`, saturating: a budget too large
// to represent lands on kForever (never wraps into the past and so into an
// instant kill), and a negative one never goes below 0.
inline MonoNs mono_after_ms(MonoNs from, std::int64_t ms) {
  MonoNs ns = 0;
  if (__builtin_mul_overflow(ms, kNsPerMs, &ns)) return ms > 0 ? kForever : 0;
  MonoNs at = 0;
  if (__builtin_add_overflow(from, ns, &at)) return ns > 0 ? kForever : 0;
  return at < 0 ? 0 : at;
}
inline double ns_to_ms(MonoNs ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace courier::sys
