// ssh_target.cpp — an ssh:// remote's user, host and port (ssh_target.hpp).
#include "agent/ssh_target.hpp"

#include <charconv>

namespace courier::agent {

std::optional<SshTarget> ssh_target(std::string_view canonical) {
  constexpr std::string_view kScheme = "ssh://";
  if (canonical.substr(0, kScheme.size()) != kScheme) return std::nullopt;
  std::string_view authority = canonical.substr(kScheme.size());
  authority = authority.substr(0, authority.find('/'));
  SshTarget t;
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    t.user = std::string(authority.substr(0, at));
    authority.remove_prefix(at + 1);
  }
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    t.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return std::nullopt;
      port = authority.substr(close + 2);
    }
  } else {
    const auto colon = authority.rfind(':');
    t.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (!port.empty()) {
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), t.port);
    if (ec != std::errc() || end != port.data() + port.size() || t.port <= 0 || t.port > 65535) return std::nullopt;
  }
  if (t.host.empty()) return std::nullopt;
  return t;
}

}  // namespace courier::agent
