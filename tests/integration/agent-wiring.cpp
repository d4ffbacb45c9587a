// agent-wiring.cpp — the parent's SSH agent as the supervisor starts it
// for one child (A5): made once the child exists, before its job frame,
// serving that child's kill domain (a stand-in asks it for its identities,
// as ssh does first) and gone once the stop is confirmed; and a job that
// cannot be made ready (no host key known) ends transport_failed with
// nothing sent. Cold and warm children.
#include <doctest/doctest.h>
#include <unistd.h>

#include <future>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "agent/agent_server.hpp"
#include "agent/known_hosts.hpp"
#include "courier/ssh_key.hpp"
#include "supervisor/supervisor.hpp"
#include "support.hpp"

namespace integration_agent_wiring {

using namespace courier;
using namespace courier::supervisor;

namespace {

const std::string kOid(40, 'a');

struct Setup {
  test::TempDir dir;
  std::shared_ptr<const SshKey> key;
  std::mutex mu;
  std::vector<std::string> events;
  std::string agent_dir;
  int prepared = 0;

  Setup() {
    const std::string path = dir.path() + "/id";
    const auto r = test::run({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    key = *load_ssh_key(path);
  }

  SupervisorOptions options(const std::string& scenario, bool warm = false) {
    SupervisorOptions o;
    o.child_program = COURIER_STANDIN;
    o.job.repo = scenario;
    o.job.remote = "ssh://git@127.0.0.1:2222/r.git";
    o.job.updates = {RefUpdate{"refs/heads/main", kOid}};
    o.deadline = sys::mono_now_ns() + 20'000 * sys::kNsPerMs;
    o.on_stderr = [](std::string_view) {};
    o.warm = warm;
    return o;
  }

  // What the seat does for an ssh:// remote, with a known_hosts text.
  void agent_for(SupervisorOptions& o, const std::string& known_hosts_text) {
    o.prepare_job = [this, known_hosts_text, deadline = o.deadline](
                        const ChildDomain& child, protocol::Job& job) -> Result<std::shared_ptr<void>> {
      std::lock_guard<std::mutex> lock(mu);
      ++prepared;
      const std::string alias = agent::host_key_alias("127.0.0.1", 2222);
      auto keys = agent::known_host_keys(known_hosts_text, "KH", alias);
      if (!keys) return tl::unexpected(keys.error());
      agent::AgentRules rules;
      rules.key = key;
      rules.host_keys = *keys;
      rules.user = "git";
      rules.deadline = deadline;
      rules.on_event = [this](const std::string& line) {
        std::lock_guard<std::mutex> l(mu);
        events.push_back(line);
      };
      auto server = agent::AgentServer::start(dir.path(), "agent-", std::move(rules),
                                              agent::KillDomainFacts{child.pid, child.cgroup});
      if (!server) return tl::unexpected(server.error());
      agent_dir = (*server)->place().dir;
      job.ssh = protocol::SshJob{"/usr/bin/ssh", (*server)->place().socket, (*server)->place().known_hosts,
                                 (*server)->place().identity, alias};
      return std::shared_ptr<void>(std::move(*server));
    };
  }
};

const std::string kHostLine =
    "[127.0.0.1]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINX9QiX1zdGNqPuJj7rXZw1JqUZFsOH/mQeWLS9T4c6c\n";

}  // namespace

TEST_SUITE("agent-wiring") {
  TEST_CASE(
      "A5: the agent made for a cold child answers that child from its kill domain and is removed after the stop") {
    Setup s;
    SupervisorOptions o = s.options("ssh-agent-ask");
    s.agent_for(o, kHostLine);
    Supervisor sup(o);
    const Outcome out = sup.run();
    CHECK_MESSAGE(out.kind == OutcomeKind::delivered, out.reason);
    CHECK(s.prepared == 1);
    REQUIRE_FALSE(s.agent_dir.empty());
    CHECK(::access(s.agent_dir.c_str(), F_OK) != 0);
    for (const auto& e : s.events) CHECK_MESSAGE(e.find("refused") == std::string::npos, e);
  }

  TEST_CASE("A5: the agent of a warm child is made when its delivery is assigned, for that child's kill domain") {
    Setup s;
    SupervisorOptions warm = s.options("ssh-agent-ask", true);
    std::promise<void> ready;
    warm.on_ready = [&ready] { ready.set_value(); };
    Supervisor sup(warm);
    Outcome out;
    std::thread runner([&] { out = sup.run(); });
    ready.get_future().wait();
    CHECK(s.prepared == 0);  // no delivery yet, no agent
    SupervisorOptions delivery = s.options("ssh-agent-ask");
    s.agent_for(delivery, kHostLine);
    REQUIRE(sup.assign(delivery));
    runner.join();
    CHECK_MESSAGE(out.kind == OutcomeKind::delivered, out.reason);
    CHECK(s.prepared == 1);
    CHECK(::access(s.agent_dir.c_str(), F_OK) != 0);
  }

  TEST_CASE("A5: a host with no known host key ends the delivery transport_failed before its job is sent") {
    Setup s;
    SupervisorOptions o = s.options("ssh-agent-ask");
    s.agent_for(o, "other.example " + kHostLine.substr(kHostLine.find(' ') + 1));
    Supervisor sup(o);
    const Outcome out = sup.run();
    CHECK(out.kind == OutcomeKind::transport_failed);
    CHECK(out.reason.find("no host key known for [127.0.0.1]:2222 in KH") == 0);
    CHECK(out.timings.job_sent == 0);
    CHECK(out.remote_effect == RemoteEffect::none);
    CHECK(s.agent_dir.empty());
  }
}

}  // namespace integration_agent_wiring
