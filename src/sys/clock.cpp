// clock.cpp — clock readings: CLOCK_MONOTONIC, and CLOCK_REALTIME for records.
#include "sys/clock.hpp"

#include <time.h>

namespace courier::sys {

MonoNs mono_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<MonoNs>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t wall_now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

}  // namespace courier::sys
