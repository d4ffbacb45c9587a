// agent_rules.hpp — what one delivery's agent may sign, and for whom (A5):
// the key, the host keys its known-hosts entry accepts, the expected user,
// the deadline, authority, the mint cap, and where refusals are told.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "agent/known_hosts.hpp"
#include "courier/host_api.hpp"
#include "courier/ssh_key.hpp"
#include "sys/clock.hpp"
#include "wire/legs.hpp"

namespace courier::agent {

// The phase word authority is asked with around a signature.
inline constexpr const char* kSignPhase = "ssh-sign";

struct AgentRules {
  std::shared_ptr<const SshKey> key;
  KnownHostKeys host_keys;  // the binding's host key must be one of host_keys.accepted
  std::string user;         // the user the authentication request must name
  sys::MonoNs deadline = 0;
  // Asked before each signature and again after it (A2, A3): a refusal
  // before refuses it, a refusal after drops the signature made. Null:
  // authority always holds.
  std::function<AuthorityAnswer(const std::string& phase)> authority;
  // Authority said no: the delivery is revoked with these words (A4).
  std::function<void(const std::string& words)> on_revoked;
  // The delivery's mint count, shared with whatever else mints for it;
  // a signature takes one, at most max_mints in all.
  std::shared_ptr<std::atomic<int>> mints = std::make_shared<std::atomic<int>>(0);
  int max_mints = wire::kMaxMints;
  // Every refusal and every signature, as one line (the delivery's log).
  std::function<void(const std::string& line)> on_event;
};

}  // namespace courier::agent
