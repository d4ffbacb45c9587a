// push_setup.hpp — what the push suite's files share: a source repository,
// the TLS fixture server, and an Executor that runs the shipped binary as
// its child.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "support.hpp"

namespace courier::test {

struct PushSetup {
  TempDir dir;
  FixtureServer server;
  std::string source;
  std::string tip;

  explicit PushSetup(int commits = 3, FixtureOptions fo = {}) : server(fo) {
    source = dir.path() + "/source";
    tip = make_source_repo(source, commits);
  }

  ExecutorOptions executor_options(CgroupMode mode = CgroupMode::automatic) const {
    ExecutorOptions o;
    o.lane_dir = dir.path() + "/lanes";
    o.child_program = COURIER_BINARY;  // the shipped binary serves as the child
    o.cgroup = mode;
    o.on_child_stderr = [](std::string_view) {};
    o.on_log = [](std::string_view) {};
    return o;
  }

  DeliveryRequest request(const std::string& repo_name, const std::string& oid, std::int64_t budget_ms = 30'000) {
    DeliveryRequest r;
    r.repo = source;
    r.remote = server.url(repo_name);
    r.ref = "refs/heads/main";
    r.oid = oid;
    r.budget = std::chrono::milliseconds(budget_ms);
    r.ca_file = server.ca_file();
    return r;
  }

  std::string remote_ref(const std::string& repo_name, const std::string& ref = "refs/heads/main") {
    auto r = git({"--git-dir", server.repo_path(repo_name), "rev-parse", "--verify", "-q", ref});
    return r.ok() ? r.out.substr(0, r.out.find('\n')) : std::string();
  }

  std::string rev(const std::string& spec) { return git_ok({"rev-parse", spec}, source); }

  long posts(const std::string& repo_name) {
    return server.count().count("POST /" + repo_name + ".git/git-receive-pack");
  }
};

}  // namespace courier::test
