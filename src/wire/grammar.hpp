// grammar.hpp — the words a delivery is asked for with, spelled once for
// the command line (--deadline, --delivery-id) and the service's API
// ("deadline", "id"): durations and delivery ids.
#pragma once

#include <chrono>
#include <string>

#include "courier/result.hpp"

namespace courier::wire {

inline constexpr std::chrono::milliseconds kDefaultDeadline{150'000};
// The longest deadline: a delivery that needs a day is a mistake, and a
// bound keeps every instant computed from it far from overflow.
inline constexpr std::chrono::milliseconds kMaxDeadline{24LL * 60 * 60 * 1000};

// "90" (seconds), "1.5s", "500ms", "2m30s", "1h30m": numbers with units h, m,
// s, ms, largest first, in whole milliseconds. Errors: invalid_argument, the
// message listing what would parse.
Result<std::chrono::milliseconds> parse_duration(const std::string& text);

// A delivery id given by the caller: 1 to 128 of [A-Za-z0-9._:-].
// Errors: invalid_argument.
Result<void> check_delivery_id(const std::string& id);

}  // namespace courier::wire
