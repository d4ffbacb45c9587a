// ssh_target.cpp — an ssh:// remote's user, host and port (ssh_target.hpp).
#include "agent/ssh_target.hpp"

#include "wire/remote.hpp"

namespace courier::agent {

std::optional<SshTarget> ssh_target(std::string_view canonical) {
  auto parsed = wire::parse_remote(canonical);
  if (!parsed || parsed->url.scheme != "ssh") return std::nullopt;
  SshTarget t;
  t.user = parsed->user.value_or("");
  t.host = parsed->url.host;
  if (t.host.size() > 2 && t.host.front() == '[') t.host = t.host.substr(1, t.host.size() - 2);
  t.port = parsed->url.port;
  return t;
}

}  // namespace courier::agent
