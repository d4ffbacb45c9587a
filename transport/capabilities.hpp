// capabilities.hpp — the capability list a receive-pack server advertises.
//
// Capabilities travel after a NUL on the first advertised line, separated by
// spaces. Some are bare words (`report-status`), some carry a value
// (`object-format=sha1`, `agent=git/2.39.5`). A client may only ask for what
// the server offered, so the request builder consults this set.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace courier::transport {

struct Capabilities {
  // Every token exactly as advertised (`report-status`, `agent=git/2.39.5`).
  std::set<std::string, std::less<>> tokens;

  // True for the bare word `name`, or for any `name=value` token.
  bool has(std::string_view name) const;

  // The value of the first `key=value` token, if there is one.
  std::optional<std::string_view> value(std::string_view key) const;

  bool operator==(const Capabilities&) const = default;
};

// Splits a space-separated capability list. Empty tokens (doubled spaces)
// are skipped.
Capabilities parse_capabilities(std::string_view list);

}  // namespace courier::transport
