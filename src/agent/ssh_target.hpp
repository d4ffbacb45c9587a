// ssh_target.hpp — who and where an ssh:// remote names, read from its
// canonical form (ssh://[user@]host[:port]/path), read by the remote's one
// parser (wire::parse_remote): the user the agent expects in the authentication request and
// the host and port the known-hosts name is made of.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace courier::agent {

struct SshTarget {
  std::string user;  // "" when the remote names none
  std::string host;  // without brackets (an IPv6 literal as is)
  int port = 22;
};

// Nullopt for anything but an ssh:// remote with a host.
std::optional<SshTarget> ssh_target(std::string_view canonical);

}  // namespace courier::agent
