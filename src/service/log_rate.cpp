// log_rate.cpp — the per-second budget of one event's log lines.
#include "service/log_rate.hpp"

#include "sys/clock.hpp"

namespace courier::service {

void LogRate::log(LogLevel level, nlohmann::json fields) {
  std::uint64_t summary = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::int64_t now = static_cast<std::int64_t>(sys::mono_now_ns() / (1000 * sys::kNsPerMs));
    if (now != second_) {
      second_ = now;
      used_ = 0;
      summary = suppressed_;
      suppressed_ = 0;
    }
    if (used_ >= per_second_) {
      ++suppressed_;
      fields = nullptr;
    } else {
      ++used_;
    }
  }
  // Written outside the lock: the log has its own.
  if (summary != 0) log_event(LogLevel::warn, "log_suppressed", {{"suppressed_event", event_}, {"count", summary}});
  if (!fields.is_null()) log_event(level, event_, std::move(fields));
}

}  // namespace courier::service
