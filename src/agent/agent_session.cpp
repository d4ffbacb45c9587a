// agent_session.cpp — one agent connection's protocol (agent_session.hpp).
#include "agent/agent_session.hpp"

#include <algorithm>

#include "agent/ssh_keys.hpp"
#include "agent/ssh_text.hpp"
#include "agent/ssh_wire.hpp"
#include "sys/clock.hpp"

namespace courier::agent {

namespace {

constexpr std::string_view kSessionBind = "session-bind@openssh.com";
constexpr std::string_view kHostbound = "publickey-hostbound-v00@openssh.com";

std::string byte_only(std::uint8_t b) { return std::string(1, static_cast<char>(b)); }

}  // namespace

std::string AgentSession::refuse(const std::string& why) const {
  if (rules_.on_event) rules_.on_event("ssh agent refused: " + why);
  return byte_only(kAgentFailure);
}

std::string AgentSession::answer(std::string_view request) {
  if (request.empty()) return refuse("an empty request");
  const auto type = static_cast<std::uint8_t>(request[0]);
  const std::string_view body = request.substr(1);
  switch (type) {
    case kRequestIdentities:
      return identities();
    case kExtension:
      return bind(body);
    case kSignRequest:
      return sign(body);
    default:
      return refuse("request type " + std::to_string(type) + ", which this agent does not answer");
  }
}

std::string AgentSession::identities() const {
  std::string out = byte_only(kIdentitiesAnswer);
  put_u32(out, 1);
  put_string(out, rules_.key->public_blob());
  put_string(out, "git-courier");
  return out;
}

std::string AgentSession::bind(std::string_view body) {
  SshReader r(body);
  auto name = r.string();
  if (!name || *name != kSessionBind) {
    return refuse("the extension " + std::string(name ? *name : "(unreadable)") + ", which this agent does not answer");
  }
  auto host_key = r.string();
  auto session_id = r.string();
  auto signature = r.string();
  auto forwarding = r.boolean();
  if (!r.ok() || !r.empty()) return refuse("a malformed session binding");
  if (session_id_) return refuse("a second session binding (one per connection)");
  if (*forwarding) return refuse("a session binding for agent forwarding");
  if (session_id->empty() || session_id->size() > 64) return refuse("a session binding with a malformed session id");
  const auto& accepted = rules_.host_keys.accepted;
  if (std::find(accepted.begin(), accepted.end(), *host_key) == accepted.end()) {
    return refuse("a session binding to the host key " + fingerprint_of(*host_key) + ", which is not known for " +
                  rules_.host_keys.alias);
  }
  if (!verify_ssh_signature(*host_key, *signature, *session_id)) {
    return refuse("a session binding whose host key signature does not verify");
  }
  session_id_ = std::string(*session_id);
  host_key_ = std::string(*host_key);
  if (rules_.on_event) rules_.on_event("ssh agent: session bound to host key " + fingerprint_of(host_key_));
  return byte_only(kAgentSuccess);
}

std::string AgentSession::userauth_mismatch(std::string_view data) const {
  SshReader r(data);
  auto session = r.string();
  auto msg = r.byte();
  auto user = r.string();
  auto service = r.string();
  auto method = r.string();
  auto has_sig = r.boolean();
  auto alg = r.string();
  auto blob = r.string();
  if (!r.ok() || *msg != kUserauthRequest || *service != "ssh-connection" || !*has_sig) {
    return "data that is not an SSH user-authentication request";
  }
  if (*session != *session_id_) return "a user-authentication request for another session than the bound one";
  if (*user != rules_.user) return "a user-authentication request for the user '" + std::string(*user) + "'";
  if (*blob != rules_.key->public_blob() || *alg != rules_.key->algorithm()) {
    return "a user-authentication request for another key";
  }
  if (*method == kHostbound) {
    auto host = r.string();
    if (!host || *host != host_key_) return "a host-bound user-authentication request naming another host key";
  } else if (*method != "publickey") {
    return "a user-authentication request by the method " + std::string(*method);
  }
  if (!r.empty()) return "a user-authentication request with trailing bytes";
  return "";
}

std::string AgentSession::sign(std::string_view body) {
  SshReader r(body);
  auto blob = r.string();
  auto data = r.string();
  auto flags = r.u32();
  if (!r.ok() || !r.empty()) return refuse("a malformed signature request");
  (void)flags;
  if (*blob != rules_.key->public_blob()) return refuse("a signature by a key this agent does not hold");
  if (!session_id_) {
    return refuse("a signature request that follows no session binding");
  }
  if (session_id_) {
    if (std::string why = userauth_mismatch(*data); !why.empty()) return refuse(why);
  }
  if (sys::mono_now_ns() >= rules_.deadline) {
    return refuse("a signature request after the deadline");
  }
  return signed_answer(*data);
}

std::string AgentSession::signed_answer(std::string_view data) {
  if (rules_.mints->fetch_add(1) >= rules_.max_mints) return refuse("a signature over the mint cap");
  auto ask = [this](const char* what) -> std::string {
    if (!rules_.authority) return "";
    const AuthorityAnswer a = rules_.authority(kSignPhase);
    if (a.ok) return "";
    if (rules_.on_revoked) rules_.on_revoked(a.reason);
    return std::string(what) + ", and authority withdrew: " + a.reason;
  };
  if (std::string why = ask("a signature request"); !why.empty()) return refuse(why);
  auto sig = rules_.key->sign(data);
  if (!sig) return refuse("a signature the key could not make: " + sig.error().message);
  // A3: authority again after the signature; one made for a delivery
  // revoked meanwhile is dropped, never written to the socket.
  if (std::string why = ask("a signature made (dropped)"); !why.empty()) return refuse(why);
  if (rules_.on_event) rules_.on_event("ssh agent: signed the user-authentication request for " + rules_.user);
  std::string out = byte_only(kSignResponse);
  put_string(out, *sig);
  return out;
}

}  // namespace courier::agent
