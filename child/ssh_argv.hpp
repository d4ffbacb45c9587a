// ssh_argv.hpp — how the delivery child runs OpenSSH's ssh for an ssh://
// remote (A5, T5): the program by absolute path, the product's options first
// (so that nothing in ~/.ssh/config, read after them, can relax them: the
// first value of an option wins in ssh), then the port and user, "--", the
// host and the one command, `git-receive-pack '<path>'`.
#pragma once

#include <string>
#include <vector>

#include "courier/result.hpp"
#include "protocol/messages.hpp"
#include "sys/clock.hpp"

namespace courier::child {

// An ssh:// remote taken apart for ssh's command line, as the one remote
// parser reads it (wire::parse_remote, wire::ssh_receive_pack_path).
struct SshTarget {
  std::string user;  // empty: ssh's own default
  std::string host;  // an IPv6 literal without its brackets
  int port = 0;      // 0: not given (22)
  std::string path;  // what git-receive-pack serves: decoded, a leading "/~" made "~"
};

// Errors: scheme_refused (not ssh://), invalid_argument (malformed, a
// password in it).
Result<SshTarget> parse_ssh_target(const std::string& remote);

// The whole argv: [job.program, -v, -o Name=value..., -p PORT, -l USER, "--",
// host, "git-receive-pack '<path>'"], the path quoted by wire::shell_quote. ConnectTimeout is the seconds left
// until `deadline` (at least 1).
std::vector<std::string> ssh_argv(const protocol::SshJob& job, const SshTarget& target, sys::MonoNs deadline);

// ssh's environment: this process's own (the parent's allowlist, A1), with
// no SSH_* variable (never a user's SSH_AUTH_SOCK: the agent is the job's).
std::vector<std::string> ssh_env();

}  // namespace courier::child
