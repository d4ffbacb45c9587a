// push_setup.hpp — what the push suite's files share: a source repository,
// the TLS fixture server, and an Executor that runs the shipped binary as
// its child; with a SQLite journal, read back through a connection of the
// test's own.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <doctest/doctest.h>

#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "journal/journal.hpp"
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

// A PushSetup whose deliveries are journalled in <dir>/state/journal.sqlite.
struct JournalledSetup : PushSetup {
  std::string journal_path;

  explicit JournalledSetup(int commits = 3) : PushSetup(commits) {
    journal_path = dir.path() + "/state/journal.sqlite";
  }

  ExecutorOptions journalled() const {
    ExecutorOptions o = executor_options();
    o.journal = journal_path;
    return o;
  }

  DeliveryRequest with_id(const std::string& id, const std::string& oid, std::int64_t budget_ms = 30'000) {
    DeliveryRequest r = request("r", oid, budget_ms);
    r.id = id;
    return r;
  }

  // The delivery as the journal has it now, read through a connection of
  // our own (what another process, or this one after a crash, would see).
  journal::Record record(const std::string& id) const {
    auto j = journal::open_sqlite(journal_path);
    REQUIRE_MESSAGE(j.has_value(), (j ? "" : j.error().message));
    auto r = (*j)->find(id);
    REQUIRE(r.has_value());
    REQUIRE_MESSAGE(r->has_value(), "no delivery " << id << " in the journal");
    return **r;
  }
};

}  // namespace courier::test
