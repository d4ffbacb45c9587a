// agent_session.hpp — the SSH agent protocol (draft-miller-ssh-agent) as
// one connection of one delivery's agent speaks it: a request's body in,
// the answer's body out. Pure: no socket, no thread (agent_server.hpp
// carries the bytes).
//
// Answered: the identity list (this key only); session-bind@openssh.com
// (the host key's signature over the session identifier must verify, the
// key must be one the known-hosts entry accepts, not forwarding, once);
// a signature of an SSH user-authentication request (RFC 4252 7, and
// OpenSSH's publickey-hostbound-v00@openssh.com naming the bound host key)
// for the bound session, the expected user and this key, before the
// deadline, while authority holds, within the mint cap. Anything else:
// SSH_AGENT_FAILURE, and the reason told to on_event.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "agent/agent_rules.hpp"

namespace courier::agent {

// Message numbers (draft-miller-ssh-agent 6.1).
inline constexpr std::uint8_t kAgentFailure = 5;
inline constexpr std::uint8_t kAgentSuccess = 6;
inline constexpr std::uint8_t kRequestIdentities = 11;
inline constexpr std::uint8_t kIdentitiesAnswer = 12;
inline constexpr std::uint8_t kSignRequest = 13;
inline constexpr std::uint8_t kSignResponse = 14;
inline constexpr std::uint8_t kExtension = 27;
// SSH_MSG_USERAUTH_REQUEST (RFC 4252).
inline constexpr std::uint8_t kUserauthRequest = 50;

class AgentSession {
 public:
  explicit AgentSession(const AgentRules& rules) : rules_(rules) {}
  // One request's body (without its length) → the answer's body.
  std::string answer(std::string_view request);

 private:
  std::string identities() const;
  std::string bind(std::string_view body);
  std::string sign(std::string_view body);
  // The reason a user-authentication request is not this session's, or "".
  std::string userauth_mismatch(std::string_view data) const;
  std::string signed_answer(std::string_view data);
  std::string refuse(const std::string& why) const;

  const AgentRules& rules_;
  std::optional<std::string> session_id_;
  std::string host_key_;
};

}  // namespace courier::agent
