// ssh_stderr.hpp — what ssh's stderr (run with -v, captured by the child and
// never relayed whole) says about a connection that failed: the server's
// host key (its "Server host key: TYPE SHA256:..." line), and why it ended,
// as the delivery's status and words.
#pragma once

#include <string>
#include <string_view>

#include "wire/status.hpp"

namespace courier::child {

struct SshFailure {
  wire::DeliveryStatus status = wire::DeliveryStatus::transport_failed;
  std::string reason;
};

// "ssh-ed25519 SHA256:..." from the "Server host key:" line, or "".
std::string ssh_server_host_key(std::string_view err);

// The lines of `err` that are not ssh's debug output, joined with " | ",
// escaped and cut: what the remote command and ssh itself said.
std::string ssh_said(std::string_view err);

// Why a connection ended before the remote answered, from ssh's stderr:
//   an unknown host key ("No ... host key is known for", "Host key
//   verification failed") or a changed one ("REMOTE HOST IDENTIFICATION HAS
//   CHANGED"): transport_failed naming the server key's fingerprint and the
//   known-hosts name it was looked up under (`alias`);
//   "Permission denied (publickey...)": auth_failed;
//   anything else (connection refused, a timeout, a name that does not
//   resolve, a repository that does not exist): transport_failed with
//   ssh's words. `what` says what was being done ("reading the ref
//   advertisement").
SshFailure classify_ssh_failure(std::string_view err, const std::string& alias, const std::string& what);

}  // namespace courier::child
