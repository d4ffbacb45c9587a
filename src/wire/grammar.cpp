// grammar.cpp — the words a delivery is asked for with, shared by the
// command line and the service's API: durations and delivery ids.
#include "wire/grammar.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

namespace courier::wire {

namespace {

constexpr const char* kDurationForms =
    "a number of seconds (90, 1.5) or numbers with units h, m, s, ms, largest first "
    "(500ms, 90s, 1.5s, 2m30s, 1h30m)";

// One component of a duration: digits, an optional fraction, a unit.
struct DurationPart {
  long long whole = 0;
  long long fraction = 0;        // the digits after the point, as a number
  long long fraction_scale = 1;  // 10^(digits after the point)
  long long unit_ms = 0;
};

// Reads "<digits>[.<digits>]<unit>" at text[i]; a bare number (no unit) is
// seconds, and only as the whole text. At most 9 digits each side of the
// point, so every product below stays far inside 64 bits. Returns nullopt
// when the text there is not a component.
std::optional<DurationPart> read_duration_part(const std::string& text, std::size_t& i) {
  auto digits = [&](long long& value, long long* scale) {
    const std::size_t from = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - from < 10) {
      value = value * 10 + (text[i] - '0');
      if (scale) *scale *= 10;
      ++i;
    }
    return i > from && i - from <= 9;
  };
  DurationPart part;
  if (!digits(part.whole, nullptr)) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits(part.fraction, &part.fraction_scale)) return std::nullopt;
  }
  const std::string rest = text.substr(i);
  for (auto [unit, ms] : {std::pair{"ms", 1LL}, {"h", 3'600'000LL}, {"m", 60'000LL}, {"s", 1000LL}}) {
    if (rest.rfind(unit, 0) == 0) {
      i += std::char_traits<char>::length(unit);
      part.unit_ms = ms;
      return part;
    }
  }
  if (rest.empty() && text.find_first_not_of("0123456789.") == std::string::npos) {
    part.unit_ms = 1000;  // a bare number: seconds, as `sleep` reads it
    return part;
  }
  return std::nullopt;
}

}  // namespace

Result<std::chrono::milliseconds> parse_duration(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return fail(Errc::invalid_argument, "cannot parse duration '" + text + "'" + why + ": use " + kDurationForms);
  };
  if (text.empty()) return bad("");
  long long total = 0;
  long long last_unit = 0;
  for (std::size_t i = 0; i < text.size();) {
    auto part = read_duration_part(text, i);
    if (!part) return bad("");
    if (last_unit != 0 && part->unit_ms >= last_unit) return bad(" (units go largest first, each once)");
    last_unit = part->unit_ms;
    // Exact in whole milliseconds, or refused: a deadline is counted in
    // milliseconds, and rounding 0.4ms to nothing would be a silent lie.
    const long long frac_ms = part->fraction * part->unit_ms;
    if (frac_ms % part->fraction_scale != 0) return bad(" (finer than a millisecond)");
    total += part->whole * part->unit_ms + frac_ms / part->fraction_scale;
  }
  if (total <= 0) return bad(" (it must be longer than zero)");
  return std::chrono::milliseconds(total);
}

Result<void> check_delivery_id(const std::string& id) {
  const bool ok = !id.empty() && id.size() <= 128 && std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' || c == '-';
  });
  if (!ok) return fail(Errc::invalid_argument, "a delivery id is 1 to 128 of A-Z a-z 0-9 . _ : -");
  return {};
}

}  // namespace courier::wire
