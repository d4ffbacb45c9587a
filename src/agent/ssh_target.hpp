// ssh_target.hpp — who and where an ssh:// remote names, read from its
// canonical form (ssh://[user@]host[:port]/path) by the one remote parser
// (wire::parse_remote, wire::ssh_endpoint): the user the agent expects in the
// authentication request, and the host and port of its known-hosts name.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "wire/remote.hpp"

namespace courier::agent {

// The user the agent expects, and the host and port its known-hosts name
// is made of.
using SshTarget = wire::SshEndpoint;

// Nullopt for anything but an ssh:// remote with a host.
std::optional<SshTarget> ssh_target(std::string_view canonical);

}  // namespace courier::agent
