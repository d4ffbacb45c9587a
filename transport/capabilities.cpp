// capabilities.cpp — capability list parsing and lookup.
#include "transport/capabilities.hpp"

namespace courier::transport {

bool Capabilities::has(std::string_view name) const {
  if (tokens.find(name) != tokens.end()) return true;
  return value(name).has_value();
}

std::optional<std::string_view> Capabilities::value(std::string_view key) const {
  const std::string prefix = std::string(key) + "=";
  // The set is ordered, so every `key=...` token sorts at or after `key=`.
  const auto it = tokens.lower_bound(prefix);
  if (it == tokens.end() || it->compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  return std::string_view(*it).substr(prefix.size());
}

Capabilities parse_capabilities(std::string_view list) {
  Capabilities caps;
  while (!list.empty()) {
    const std::size_t space = list.find(' ');
    const std::string_view token = list.substr(0, space);
    if (!token.empty()) caps.tokens.emplace(token);
    if (space == std::string_view::npos) break;
    list.remove_prefix(space + 1);
  }
  return caps;
}

}  // namespace courier::transport
