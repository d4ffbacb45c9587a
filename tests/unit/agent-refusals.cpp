// agent-refusals.cpp — the parent's SSH agent for one delivery (A5),
// through a fixture client that sends what real ssh never does: every
// refusal (a binding to another host key or with a bad signature, a
// signature with no binding, for another session or user, after the
// deadline, over the mint cap, with authority gone, a second connection, a
// peer outside the kill domain) and the one path that signs.
#include <doctest/doctest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "agent/agent_server.hpp"
#include "agent/agent_session.hpp"
#include "agent/ssh_keys.hpp"
#include "agent_client.hpp"
#include "courier/ssh_key.hpp"
#include "support.hpp"

namespace unit_agent_refusals {

using namespace courier;
using test::AgentClient;

namespace {

constexpr char kFailure = '\x05';
constexpr char kSuccess = '\x06';

std::shared_ptr<const SshKey> make_key(const test::TempDir& dir, const std::string& name) {
  const std::string path = dir.path() + "/" + name;
  const auto r = test::run({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "t", "-f", path});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto key = load_ssh_key(path);
  REQUIRE_MESSAGE(key.has_value(), key.error().message);
  return *key;
}

struct Agent {
  test::TempDir dir;
  std::shared_ptr<const SshKey> key = make_key(dir, "user_key");
  std::shared_ptr<const SshKey> host = make_key(dir, "host_key");
  std::shared_ptr<const SshKey> other_host = make_key(dir, "other_host_key");
  std::string session_id = std::string(32, '\x5a');
  std::mutex mu;
  std::vector<std::string> events;
  std::vector<std::string> revoked;

  agent::AgentRules rules() {
    agent::AgentRules r;
    r.key = key;
    r.host_keys.alias = "[127.0.0.1]:2222";
    r.host_keys.accepted = {host->public_blob()};
    r.user = "git";
    r.deadline = sys::mono_now_ns() + 60'000 * sys::kNsPerMs;
    r.on_event = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      events.push_back(line);
    };
    r.on_revoked = [this](const std::string& words) {
      std::lock_guard<std::mutex> lock(mu);
      revoked.push_back(words);
    };
    return r;
  }

  std::unique_ptr<agent::AgentServer> start(agent::AgentRules r, agent::KillDomainFacts domain = {::getpgrp(), ""}) {
    auto s = agent::AgentServer::start(dir.path(), "agent-", std::move(r), std::move(domain));
    REQUIRE_MESSAGE(s.has_value(), s.error().message);
    return std::move(*s);
  }

  // A binding as ssh makes it: the host key's signature over the session id.
  std::string good_bind() const { return AgentClient::bind(host->public_blob(), session_id, *host->sign(session_id)); }

  std::string userauth(const std::string& sid, const std::string& user) const {
    return AgentClient::userauth(sid, user, key->algorithm(), key->public_blob());
  }

  bool said(const std::string& words) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& e : events) {
      if (e.find(words) != std::string::npos) return true;
    }
    return false;
  }
};

}  // namespace

TEST_SUITE("agent-refusals") {
  TEST_CASE(
      "A5: after a binding to the known host key, the agent signs the matching user-authentication request and the "
      "signature verifies") {
    Agent a;
    auto server = a.start(a.rules());
    AgentClient c(server->place().socket);
    REQUIRE(c.connected());
    const std::string ids = c.request(AgentClient::identities());
    REQUIRE(ids.size() > 5);
    CHECK(ids[0] == '\x0c');
    CHECK(ids.find(a.key->public_blob()) != std::string::npos);
    CHECK(c.request(a.good_bind()) == std::string(1, kSuccess));
    const std::string data = a.userauth(a.session_id, "git");
    const std::string sig = AgentClient::signature_of(c.request(AgentClient::sign(a.key->public_blob(), data)));
    REQUIRE_FALSE(sig.empty());
    CHECK(agent::verify_ssh_signature(a.key->public_blob(), sig, data));
    // OpenSSH's host-bound method names the bound host key: signed too.
    const std::string hostbound =
        AgentClient::userauth(a.session_id, "git", a.key->algorithm(), a.key->public_blob(), a.host->public_blob());
    CHECK_FALSE(AgentClient::signature_of(c.request(AgentClient::sign(a.key->public_blob(), hostbound))).empty());
    CHECK(a.said("signed the user-authentication request for git"));
  }

  TEST_CASE("A5: the agent refuses a signature request that follows no session binding") {
    Agent a;
    auto server = a.start(a.rules());
    AgentClient c(server->place().socket);
    const std::string data = a.userauth(a.session_id, "git");
    CHECK(c.request(AgentClient::sign(a.key->public_blob(), data)) == std::string(1, kFailure));
    CHECK(a.said("a signature request that follows no session binding"));
  }

  TEST_CASE("A5: the agent refuses a binding to a host key the known-hosts entry does not accept") {
    Agent a;
    auto server = a.start(a.rules());
    AgentClient c(server->place().socket);
    const std::string bind =
        AgentClient::bind(a.other_host->public_blob(), a.session_id, *a.other_host->sign(a.session_id));
    CHECK(c.request(bind) == std::string(1, kFailure));
    CHECK(a.said("which is not known for [127.0.0.1]:2222"));
    // And with no binding made, nothing is signed after it.
    CHECK(c.request(AgentClient::sign(a.key->public_blob(), a.userauth(a.session_id, "git"))) ==
          std::string(1, kFailure));
  }

  TEST_CASE("A5: the agent refuses a binding whose host key signature does not verify") {
    Agent a;
    auto server = a.start(a.rules());
    AgentClient c(server->place().socket);
    const std::string bind =
        AgentClient::bind(a.host->public_blob(), a.session_id, *a.host->sign(a.session_id + "other"));
    CHECK(c.request(bind) == std::string(1, kFailure));
    CHECK(a.said("does not verify"));
    // A forwarding binding, and a second binding, are refused too.
    const std::string fwd = AgentClient::bind(a.host->public_blob(), a.session_id, *a.host->sign(a.session_id), true);
    CHECK(c.request(fwd) == std::string(1, kFailure));
    CHECK(c.request(a.good_bind()) == std::string(1, kSuccess));
    CHECK(c.request(a.good_bind()) == std::string(1, kFailure));
    CHECK(a.said("a second session binding"));
  }

  TEST_CASE("A5: the agent refuses a user-authentication request whose session id does not match the binding") {
    Agent a;
    auto server = a.start(a.rules());
    AgentClient c(server->place().socket);
    REQUIRE(c.request(a.good_bind()) == std::string(1, kSuccess));
    const std::string data = a.userauth(std::string(32, '\x11'), "git");
    CHECK(c.request(AgentClient::sign(a.key->public_blob(), data)) == std::string(1, kFailure));
    CHECK(a.said("for another session than the bound one"));
  }

  TEST_CASE("A5: the agent refuses a user-authentication request for another user, or data that is no such request") {
    Agent a;
    auto server = a.start(a.rules());
    AgentClient c(server->place().socket);
    REQUIRE(c.request(a.good_bind()) == std::string(1, kSuccess));
    CHECK(c.request(AgentClient::sign(a.key->public_blob(), a.userauth(a.session_id, "mallory"))) ==
          std::string(1, kFailure));
    CHECK(a.said("for the user 'mallory'"));
    CHECK(c.request(AgentClient::sign(a.key->public_blob(), "anything at all")) == std::string(1, kFailure));
    CHECK(a.said("not an SSH user-authentication request"));
  }

  TEST_CASE("A5: the agent refuses a signature request after the deadline") {
    Agent a;
    agent::AgentRules r = a.rules();
    r.deadline = sys::mono_now_ns() - 1;
    agent::AgentSession session(r);
    CHECK(session.answer(a.good_bind()) == std::string(1, kSuccess));
    CHECK(session.answer(AgentClient::sign(a.key->public_blob(), a.userauth(a.session_id, "git"))) ==
          std::string(1, kFailure));
    CHECK(a.said("a signature request after the deadline"));
    // The socket of a delivery whose deadline passed answers nothing.
    auto server = a.start(r);
    AgentClient c(server->place().socket);
    CHECK(c.request(AgentClient::identities()).empty());
  }

  TEST_CASE("A5: the agent refuses signatures over the mint cap, and one asked or made while authority is withdrawn") {
    Agent a;
    agent::AgentRules r = a.rules();
    r.max_mints = 1;
    int asked = 0;
    r.authority = [&asked](const std::string& phase) {
      ++asked;
      CHECK(phase == agent::kSignPhase);
      return AuthorityAnswer{asked != 4, asked == 4 ? "revoked by the test" : ""};
    };
    agent::AgentSession session(r);
    REQUIRE(session.answer(a.good_bind()) == std::string(1, kSuccess));
    const std::string sign = AgentClient::sign(a.key->public_blob(), a.userauth(a.session_id, "git"));
    CHECK(AgentClient::signature_of(session.answer(sign)).size() > 0);
    CHECK(asked == 2);  // before and after
    CHECK(session.answer(sign) == std::string(1, kFailure));
    CHECK(a.said("over the mint cap"));
    r.max_mints = 8;
    // Asked a third time (holds), a fourth time after signing (withdrawn):
    // the signature made is dropped, and the delivery revoked.
    CHECK(session.answer(sign) == std::string(1, kFailure));
    CHECK(a.said("a signature made (dropped), and authority withdrew: revoked by the test"));
    CHECK(a.revoked == std::vector<std::string>{"revoked by the test"});
  }

  TEST_CASE("A5: the agent refuses a second connection while the first is served") {
    Agent a;
    auto server = a.start(a.rules());
    AgentClient first(server->place().socket);
    REQUIRE(first.request(AgentClient::identities()).size() > 5);
    AgentClient second(server->place().socket);
    CHECK(second.closed_by_agent());
    CHECK(a.said("a second connection"));
    CHECK(second.request(AgentClient::identities()).empty());
    CHECK(first.request(AgentClient::identities()).size() > 5);
  }

  TEST_CASE("A5: the agent refuses a peer outside the delivery's kill domain") {
    Agent a;
    auto server = a.start(a.rules());
    // Prepared before the fork: the child only makes system calls.
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, server->place().socket.c_str(), sizeof addr.sun_path - 1);
    const char request[] = {0, 0, 0, 1, 11};
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // A process group of its own: outside the domain (this test's group).
      ::setpgid(0, 0);
      const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ::_exit(2);
      (void)::send(fd, request, sizeof request, MSG_NOSIGNAL);
      pollfd p{fd, POLLIN, 0};
      char buf[64];
      const bool answered = ::poll(&p, 1, 5000) == 1 && ::recv(fd, buf, sizeof buf, 0) > 0;
      ::_exit(answered ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);  // connected, never answered
    CHECK(a.said("outside the delivery's kill domain"));
    // A peer in the domain is still served: the refusal took no slot.
    AgentClient c(server->place().socket);
    CHECK(c.request(AgentClient::identities()).size() > 5);
  }

  TEST_CASE(
      "A5: the agent's directory is private, holds the public key, ssh's known hosts and the socket, and is gone "
      "after") {
    Agent a;
    std::string dir;
    {
      agent::AgentRules r = a.rules();
      r.host_keys.revoked = {a.other_host->public_blob()};
      auto server = a.start(r);
      dir = server->place().dir;
      struct stat st {};
      REQUIRE(::lstat(dir.c_str(), &st) == 0);
      CHECK((st.st_mode & 07777) == 0700);
      CHECK(::access(server->place().socket.c_str(), F_OK) == 0);
      const auto pub = test::run({"/bin/cat", server->place().identity});
      CHECK(pub.out == a.key->public_line() + "\n");
      const auto kh = test::run({"/bin/cat", server->place().known_hosts});
      CHECK(kh.out ==
            "[127.0.0.1]:2222 " + a.host->public_line() + "\n@revoked * " + a.other_host->public_line() + "\n");
    }
    CHECK(::access(dir.c_str(), F_OK) != 0);
  }
}

}  // namespace unit_agent_refusals
