// agent_server.hpp — one SSH delivery's agent (A5): a private 0700
// directory with the key's public half (id.pub), the host keys ssh may
// accept (known_hosts) and the socket (agent); a thread that accepts one
// connection, from a process of the delivery's kill domain, and answers it
// by AgentSession's rules until the deadline or until stopped. Destroyed:
// the thread is joined and the directory removed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent_rules.hpp"
#include "agent/agent_session.hpp"
#include "courier/result.hpp"
#include "sys/events.hpp"
#include "sys/private_dir.hpp"
#include "sys/unix_listener.hpp"

namespace courier::agent {

// An agent message longer than this ends the connection (the longest real
// one, a signature request over a user-authentication request, is a few KiB).
inline constexpr std::size_t kMaxAgentMessage = 256 * 1024;

// The delivery's kill domain, as the peer check needs it.
struct KillDomainFacts {
  std::int64_t leader = 0;  // the child: its process group's id too
  std::string cgroup;       // the child's cgroup directory; "" without one
};

// True when `pid` runs in the domain: in its cgroup when it has one, else
// in its process group.
bool in_kill_domain(std::int64_t pid, const KillDomainFacts& domain);

struct AgentPlace {
  std::string dir;          // the private directory
  std::string socket;       // dir/agent
  std::string identity;     // dir/id.pub
  std::string known_hosts;  // dir/known_hosts
};

class AgentServer {
 public:
  // Makes the directory `name_prefix` + six random characters in
  // `parent` (a private directory of this user) and starts serving.
  // Errors: os_error, invalid_argument (from the directory or socket).
  static Result<std::unique_ptr<AgentServer>> start(const std::string& parent, const std::string& name_prefix,
                                                    AgentRules rules, KillDomainFacts domain);
  ~AgentServer();
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  const AgentPlace& place() const { return place_; }
  // Ends the thread (idempotent); the socket and directory go with the
  // object.
  void stop();

 private:
  AgentServer() = default;
  Result<void> make_files(const std::string& parent, const std::string& name_prefix);
  void serve();
  void on_listener(bool& taken);
  // False: the connection ends.
  bool on_connection();
  bool answer_all();
  bool write_answer(const std::string& body);
  void event(const std::string& line) const;

  AgentRules rules_;
  KillDomainFacts domain_;
  AgentPlace place_;
  sys::PrivateDir parent_;
  std::string name_;
  sys::UnixListener listener_;
  sys::ScopedFd conn_;
  std::string inbox_;
  std::unique_ptr<AgentSession> session_;  // made with the connection
  sys::EventFd wake_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

}  // namespace courier::agent
