// clock.cpp — CLOCK_MONOTONIC readings.
#include "sys/clock.hpp"

#include <time.h>

namespace courier::sys {

MonoNs mono_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<MonoNs>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace courier::sys
