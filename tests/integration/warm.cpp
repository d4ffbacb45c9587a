// warm.cpp — the warm child: spawned ahead of need, given its job and
// (by descriptor passing) its lane lock when a delivery gets the seat, and
// killed and confirmed like any other child when the executor shuts down.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <memory>

#include "sys/clock.hpp"
#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "seat/lane.hpp"
#include "wire/remote.hpp"
#include "sys/flock.hpp"
#include "support.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_warm {

using namespace courier;
using sys::kNsPerMs;
using sys::mono_now_ns;

namespace {

ExecutorOptions warm_options(const std::string& lane_dir) {
  ExecutorOptions o;
  o.lane_dir = lane_dir;
  o.workers = 1;
  o.warm_child = true;
  o.child_program = COURIER_BINARY;
  o.on_child_stderr = [](std::string_view) {};
  o.on_log = [](std::string_view) {};
  return o;
}

// Waits for the fact: the executor's warm child has said hello.
std::int64_t wait_warm(const Executor& ex) { return ex.wait_warm_child(std::chrono::milliseconds(20'000)); }

}  // namespace

TEST_SUITE("seat") {
  TEST_CASE("S6 warm: a warm child takes a delivery's job and its lane lock by descriptor passing, and delivers") {
    test::TempDir dir;
    test::FixtureServer server;
    server.create_bare_repo("warm");
    const std::string tip = test::make_source_repo(dir.path() + "/src", 2);
    server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    Executor ex(warm_options(dir.path() + "/lanes"));
    const std::int64_t warm = wait_warm(ex);
    REQUIRE(warm > 0);
    DeliveryRequest r;
    r.repo = dir.path() + "/src";
    r.remote = server.url("warm");
    r.ref = "refs/heads/main";
    r.oid = tip;
    r.budget = std::chrono::milliseconds(30'000);
    r.ca_file = server.ca_file();
    auto h = ex.submit(r);
    REQUIRE(server.wait_for_held(20'000).has_value());
    // While the POST is held, the warm child holds the lane lock at fd 3.
    const std::string lock = dir.path() + "/lanes/" + seat::lane_lock_name(*wire::lane_key(r.remote));
    std::error_code ec;
    const auto fd3 = std::filesystem::read_symlink("/proc/" + std::to_string(warm) + "/fd/3", ec);
    CHECK_MESSAGE(fd3.string() == lock, "fd 3 of the warm child is ", fd3.string());
    server.release();
    Outcome o = h.wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(o.warm);
    CHECK(o.child.pid == warm);
    CHECK(o.timings.hello < o.timings.assigned);  // it said hello before it had a job
    test::report("warm child", "seat to job accepted", sys::ns_to_ms(o.timings.job_accepted - o.timings.seat), "ms");
    CHECK_FALSE(sys::pid_exists(static_cast<pid_t>(warm)));
  }

  TEST_CASE("S2 warm: shutting the executor down kills and confirms the unused warm child") {
    test::TempDir dir;
    std::int64_t warm = 0;
    {
      Executor ex(warm_options(dir.path() + "/lanes"));
      warm = wait_warm(ex);
      REQUIRE(warm > 0);
      CHECK(sys::pid_exists(static_cast<pid_t>(warm)));
    }
    CHECK_MESSAGE(!sys::pid_exists(static_cast<pid_t>(warm)), "the warm child outlived its executor");
  }

  TEST_CASE("S5 warm: a delivery revoked before dispatch leaves the warm child unused and spawns nothing") {
    test::TempDir dir;
    const std::string lanes = dir.path() + "/lanes";
    Executor ex(warm_options(lanes));
    const std::int64_t warm = wait_warm(ex);
    REQUIRE(warm > 0);
    DeliveryRequest r;
    r.repo = dir.path();
    r.remote = "https://127.0.0.1:9/none.git";
    r.ref = "refs/heads/main";
    r.oid = std::string(40, 'a');
    // The lane is held by another holder (this test, through a lock
    // description of its own), so the delivery is pending — a fact it
    // announces — when it is revoked: cancellation wins before any claim.
    auto lanes_dir = sys::LaneDir::open(lanes);
    REQUIRE(lanes_dir.has_value());
    auto lock = sys::LockFile::open(*lanes_dir, seat::lane_lock_name(*wire::lane_key(r.remote)));
    REQUIRE(lock.has_value());
    REQUIRE(lock->try_lock().value_or(false));
    auto pending = std::make_shared<std::promise<void>>();
    auto once = std::make_shared<std::atomic<bool>>(false);
    r.on_event = [pending, once](const DeliveryEvent& e) {
      if (e.kind == DeliveryEvent::Kind::pending && !once->exchange(true)) pending->set_value();
    };
    auto h = ex.submit(r);
    REQUIRE(pending->get_future().wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    h.revoke("changed my mind");
    Outcome o = h.wait();
    lock->unlock();
    CHECK_MESSAGE(o.kind == OutcomeKind::cancelled_no_dispatch, o.reason);
    CHECK_FALSE(o.dispatched);
    CHECK_MESSAGE(sys::pid_exists(static_cast<pid_t>(warm)),
                  "revoking a pending delivery cost the warm child its life");
    CHECK(ex.warm_child_pid() == warm);
  }
}

}  // namespace integration_warm
