// service_log.cpp — JSON lines on stderr.
#include "service/service_log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "courier/words.hpp"

namespace courier::service {

namespace {

std::mutex g_log_mu;

constexpr WordRow<LogLevel> kLevelWords[] = {
    {LogLevel::info, "info"}, {LogLevel::warn, "warn"}, {LogLevel::error, "error"}};

const char* level_name(LogLevel l) { return word_of(kLevelWords, l).data(); }

}  // namespace

std::string iso_time(std::int64_t unix_ms) {
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
  return buf;
}

void log_event(LogLevel level, const std::string& event, nlohmann::json fields) {
  const auto now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  nlohmann::json line = nlohmann::json::object();
  line["ts"] = iso_time(now);
  line["level"] = level_name(level);
  line["event"] = event;
  if (fields.is_object()) {
    for (auto& [k, v] : fields.items()) line[k] = v;
  }
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(g_log_mu);
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace courier::service
