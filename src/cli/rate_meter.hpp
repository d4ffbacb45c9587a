// rate_meter.hpp — the current rate of a growing count (bytes sent): over
// the last window (a second, as a person reads a rate), not an average
// since the start, so a transfer that speeds up or stalls shows it within
// a second. Pure: fed (instant, running total) samples; no clock of its own.
#pragma once

#include <cstdint>
#include <deque>

#include "sys/clock.hpp"

namespace courier::cli {

class RateMeter {
 public:
  static constexpr sys::MonoNs kDefaultWindow = sys::kNsPerMs * 1000;

  explicit RateMeter(sys::MonoNs window = kDefaultWindow) : window_(window) {}

  // One sample: the running total at instant `at` (CLOCK_MONOTONIC ns).
  // Samples come in order of time; one older than the newest, or a total
  // that went back, starts the meter afresh from it.
  void add(sys::MonoNs at, std::uint64_t total);

  // Units per second between the newest sample and the newest one at
  // least a window older (or the oldest kept, while the meter is younger
  // than a window). 0 with fewer than two samples or no time between them.
  double rate() const;

 private:
  struct Sample {
    sys::MonoNs at;
    std::uint64_t total;
  };
  sys::MonoNs window_;
  std::deque<Sample> samples_;
};

}  // namespace courier::cli
