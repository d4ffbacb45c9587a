// warm-pool.cpp — ExecutorOptions::warm_children: a pool of warm
// children kept ready, each used child replaced, every one killed and its
// stop confirmed when the executor shuts down (no process left).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "support.hpp"
#include "sys/clock.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_warm_pool {

using namespace courier;

namespace {

constexpr std::size_t kPool = 3;

ExecutorOptions pool_options(const std::string& lane_dir) {
  ExecutorOptions o;
  o.lane_dir = lane_dir;
  o.workers = 2;
  o.warm_children = kPool;
  o.child_program = COURIER_BINARY;
  o.on_child_stderr = [](std::string_view) {};
  o.on_log = [](std::string_view) {};
  return o;
}

bool alive(std::int64_t pid) {
  const char st = sys::proc_state(static_cast<pid_t>(pid));
  return st != 0 && st != 'Z' && st != 'X';
}

// VmRSS of a process (KiB), 0 when unreadable.
long rss_kib(std::int64_t pid) {
  const std::string status = test::read_file("/proc/" + std::to_string(pid) + "/status");
  const auto at = status.find("VmRSS:");
  return at == std::string::npos ? 0 : std::atol(status.c_str() + at + 6);
}

}  // namespace

TEST_SUITE("seat") {
  TEST_CASE(
      "S2 warm: warm_children keeps N warm children ready, replaces each one a delivery takes, and shutdown kills "
      "and confirms every one") {
    test::TempDir dir;
    test::FixtureServer server;
    server.create_bare_repo("a");
    server.create_bare_repo("b");
    const std::string tip = test::make_source_repo(dir.path() + "/src", 2);
    std::set<std::int64_t> seen;
    {
      Executor ex(pool_options(dir.path() + "/lanes"));
      const auto t0 = sys::mono_now_ns();
      REQUIRE(ex.wait_warm_ready(kPool, std::chrono::milliseconds(30'000)) == kPool);
      test::report("warm child", "pool of 3: construction to all ready", sys::ns_to_ms(sys::mono_now_ns() - t0), "ms");
      const auto first = ex.warm_child_pids();
      REQUIRE(first.size() == kPool);
      seen.insert(first.begin(), first.end());
      CHECK_MESSAGE(seen.size() == kPool, "two warm children of the pool share a pid");
      for (auto pid : first) CHECK(alive(pid));
      test::report("warm child", "resident memory of one ready warm child", static_cast<double>(rss_kib(first[0])),
                   "KiB");
      // Two deliveries on two lanes at once, both held at their POST: each
      // runs on a warm child of the pool, and the pool is refilled meanwhile.
      server.hold(test::RequestMatch{std::nullopt, "POST", "git-receive-pack", 2});
      std::vector<DeliveryHandle> handles;
      for (const char* repo : {"a", "b"}) {
        DeliveryRequest r;
        r.repo = dir.path() + "/src";
        r.remote = server.url(repo);
        r.ref = "refs/heads/main";
        r.oid = tip;
        r.budget = std::chrono::milliseconds(30'000);
        r.ca_file = server.ca_file();
        handles.push_back(ex.submit(r));
      }
      REQUIRE(server.wait_for_held(20'000).has_value());
      REQUIRE(server.wait_for_held(20'000).has_value());
      const auto t_held = sys::mono_now_ns();
      CHECK_MESSAGE(ex.wait_warm_ready(kPool, std::chrono::milliseconds(10'000)) == kPool,
                    "the pool was not refilled while two of its children ran deliveries");
      test::report("warm child", "pool of 3: both POSTs held to pool refilled",
                   sys::ns_to_ms(sys::mono_now_ns() - t_held), "ms");
      const auto refilled = ex.warm_child_pids();
      seen.insert(refilled.begin(), refilled.end());
      server.release();
      std::set<std::int64_t> used;
      for (auto& h : handles) {
        const Outcome o = h.wait();
        CHECK_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
        CHECK(o.warm);
        CHECK_MESSAGE(std::find(first.begin(), first.end(), o.child.pid) != first.end(),
                      "a delivery ran on a child that was not in the pool");
        used.insert(o.child.pid);
      }
      CHECK_MESSAGE(used.size() == 2, "two live deliveries shared one warm child");
      CHECK(seen.size() == kPool + 2);
      for (auto pid : ex.warm_child_pids()) CHECK(alive(pid));
    }
    for (auto pid : seen) {
      CHECK_MESSAGE(!sys::pid_exists(static_cast<pid_t>(pid)),
                    "warm child " << pid << " outlived its executor (or was never reaped)");
    }
  }

  TEST_CASE("S2 warm: warm_child = true keeps one warm child, as before") {
    test::TempDir dir;
    ExecutorOptions o = pool_options(dir.path() + "/lanes");
    o.warm_children = 0;
    o.warm_child = true;
    std::int64_t pid = 0;
    {
      Executor ex(o);
      REQUIRE(ex.wait_warm_ready(1, std::chrono::milliseconds(20'000)) == 1);
      pid = ex.warm_child_pid();
      CHECK(pid > 0);
      CHECK(ex.warm_child_pids() == std::vector<std::int64_t>{pid});
    }
    CHECK_FALSE(sys::pid_exists(static_cast<pid_t>(pid)));
  }
}

}  // namespace integration_warm_pool
