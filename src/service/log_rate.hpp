// log_rate.hpp — a bound on the lines one kind of event writes: at most a
// budget per second, the rest counted and said in one summary line
// ("log_suppressed", with the event and the count) when the next second
// opens. A caller who can open connections must not be able to fill the
// service's log (or the journal of systemd behind it) at the rate of its
// connections.
#pragma once

#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "service/service_log.hpp"

namespace courier::service {

class LogRate {
 public:
  explicit LogRate(std::string event, unsigned per_second) : event_(std::move(event)), per_second_(per_second) {}
  // Logs the line, or counts it when this second's budget is spent.
  void log(LogLevel level, nlohmann::json fields);

 private:
  std::mutex mu_;
  std::string event_;
  unsigned per_second_;
  std::int64_t second_ = -1;  // the monotonic second the budget is for
  unsigned used_ = 0;
  std::uint64_t suppressed_ = 0;
};

}  // namespace courier::service
