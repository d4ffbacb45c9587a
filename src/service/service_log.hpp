// service_log.hpp — the service's log: one JSON object per line on stderr
// ({"ts", "level", "event", "delivery"?, ...}), written whole under a lock
// so lines from several threads never interleave. Callers never put a
// secret in a field: remotes are logged canonical (no user information),
// credentials by name only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace courier::service {

enum class LogLevel { info, warn, error };

// `fields` is a JSON object (or null); "delivery" among them names the delivery.
void log_event(LogLevel level, const std::string& event, nlohmann::json fields = nullptr);

// "2026-12-01T22:00:00.123Z" for a wall-clock instant in ms since the epoch.
std::string iso_time(std::int64_t unix_ms);

}  // namespace courier::service
