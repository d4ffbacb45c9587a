// ssh_target.cpp — an ssh:// remote's user, host and port (ssh_target.hpp).
#include "agent/ssh_target.hpp"

#include "wire/remote.hpp"

namespace courier::agent {

std::optional<SshTarget> ssh_target(std::string_view canonical) {
  auto parsed = wire::parse_remote(canonical);
  if (!parsed) return std::nullopt;
  return wire::ssh_endpoint(*parsed);
}

}  // namespace courier::agent
