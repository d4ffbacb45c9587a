// lease-child.cpp — rule L2: the delivery child bounds itself. Its job
// carries the lane's lease bound, each renewal reaches it as a `lease`
// frame (also while it is inside a leg, and also for a warm child), and its
// own timer SIGKILLs its process group at the bound. The parent's lease kill
// is switched off here (a test-only option), so the deadline is the only
// thing the parent would kill at: a death at the bound is the child's own.
#include <doctest/doctest.h>
#include <signal.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "fixture_server.hpp"
#include "supervisor/lease_bound.hpp"
#include "supervisor/supervisor.hpp"
#include "support.hpp"
#include "sys/clock.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_lease_child {

using namespace courier;
using namespace courier::supervisor;
using sys::kNsPerMs;
using sys::mono_now_ns;

namespace {

// A real delivery (the git-courier binary as the child) to the fixture
// server, whose advertisement GET the server holds: the child waits inside
// its first leg until something kills it.
struct HeldPush {
  test::TempDir dir;
  test::FixtureServer server;
  std::string tip;

  HeldPush() {
    server.create_bare_repo("lease");
    tip = test::make_source_repo(dir.path() + "/src", 2);
    server.hold(test::RequestMatch::next("GET", "info/refs"));
  }

  SupervisorOptions delivery(std::int64_t budget_ms) const {
    SupervisorOptions o;
    o.child_program = COURIER_BINARY;
    o.job.repo = dir.path() + "/src";
    o.job.remote = server.url("lease");
    o.job.updates = {RefUpdate{"refs/heads/main", tip}};
    o.job.ca_file = server.ca_file();
    o.deadline = mono_now_ns() + budget_ms * kNsPerMs;
    o.cgroup = CgroupMode::off;
    o.lease_kill_disabled_for_tests = true;
    o.on_stderr = [](std::string_view) {};
    return o;
  }
};

// The outcome of a child that killed itself at `bound`.
void check_own_kill(const Outcome& o, sys::MonoNs bound, const std::string& figure) {
  REQUIRE_MESSAGE(o.kind == OutcomeKind::revoked, (std::string(outcome_name(o.kind)) + ": " + o.reason));
  CHECK(o.revoke_cause == "lease_lost");
  CHECK(o.child.signal == SIGKILL);
  REQUIRE(o.timings.exited != 0);
  const double after_bound_ms = sys::ns_to_ms(o.timings.exited - bound);
  test::report("child lease timer", figure, after_bound_ms, "ms");
  CHECK_MESSAGE(after_bound_ms >= 0, "the child died ", -after_bound_ms, " ms before its bound");
  CHECK(after_bound_ms < 200);
  // The parent sent no kill before the child was already dead.
  CHECK(o.timings.kill >= o.timings.exited);
  CHECK(o.child.reaped);
  CHECK(o.timings.confirmed != 0);
  CHECK_FALSE(sys::pid_exists(static_cast<pid_t>(o.child.pid)));
}

}  // namespace

TEST_SUITE("lease") {
  TEST_CASE("L2: with the parent's lease kill off, the child kills itself at its lease bound, moved by a lease frame") {
    HeldPush push;
    auto opt = push.delivery(8'000);
    auto lease = std::make_shared<LeaseBound>(mono_now_ns() + 2'000 * kNsPerMs);
    opt.lease = lease;
    Supervisor sup(opt);
    Outcome o;
    std::thread t([&] { o = sup.run(); });
    // Once the child is inside its first leg (not reading its channel), the
    // lease is renewed: the child must hear of it or die at the old bound.
    const bool held = push.server.wait_for_held(10'000).has_value();
    const sys::MonoNs first = lease->get();
    const sys::MonoNs moved = mono_now_ns() + 2'500 * kNsPerMs;
    lease->move_to(moved);
    t.join();
    REQUIRE(held);
    REQUIRE(moved > first);
    check_own_kill(o, moved, "bound to own kill (cold)");
  }

  TEST_CASE("L2: a warm child takes its lease bound with the job and kills itself at a renewed bound") {
    HeldPush push;
    SupervisorOptions warm;
    warm.warm = true;
    warm.child_program = COURIER_BINARY;
    warm.cgroup = CgroupMode::off;
    warm.on_stderr = [](std::string_view) {};
    test::Latch ready;
    warm.on_ready = [ready] { ready.open(); };
    Supervisor sup(warm);
    Outcome o;
    std::thread t([&] { o = sup.run(); });
    const bool was_ready = ready.wait(20'000);
    auto opt = push.delivery(8'000);
    auto lease = std::make_shared<LeaseBound>(mono_now_ns() + 2'000 * kNsPerMs);
    opt.lease = lease;
    const bool assigned = was_ready && sup.assign(opt);
    if (!assigned) sup.revoke("the warm child was not ready");
    const bool held = assigned && push.server.wait_for_held(10'000).has_value();
    const sys::MonoNs moved = mono_now_ns() + 2'500 * kNsPerMs;
    lease->move_to(moved);
    t.join();
    REQUIRE(was_ready);
    REQUIRE(assigned);
    REQUIRE(held);
    CHECK(o.warm);
    check_own_kill(o, moved, "bound to own kill (warm)");
  }
}

}  // namespace integration_lease_child
