// lease-bound.cpp — rule L1 in the supervisor: a child is killed at
// min(deadline, lease bound), a bound moved later keeps it alive, and the
// deadline is never extended by a bound later than it. The children are the
// stand-ins of fixtures/standin.cpp, which have no lease timer of their own
// (L2 is integration/lease-child.cpp), so every kill here is the parent's.
#include <doctest/doctest.h>
#include <signal.h>

#include <memory>
#include <string>

#include "protocol/messages.hpp"
#include "supervisor/lease_bound.hpp"
#include "supervisor/supervisor.hpp"
#include "support.hpp"
#include "sys/clock.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_lease_bound {

using namespace courier;
using namespace courier::supervisor;
using sys::kNsPerMs;
using sys::mono_now_ns;

namespace {

SupervisorOptions wedge(std::int64_t budget_ms) {
  SupervisorOptions o;
  o.child_program = COURIER_STANDIN;
  o.job.repo = "wedge";  // ignores SIGTERM and blocks forever
  o.job.remote = "https://127.0.0.1:9/r.git";
  o.job.updates = {RefUpdate{"refs/heads/main", std::string(40, 'a')}};
  o.deadline = mono_now_ns() + budget_ms * kNsPerMs;
  o.cgroup = CgroupMode::off;
  o.on_stderr = [](std::string_view) {};
  return o;
}

void check_confirmed_and_gone(const Outcome& o) {
  CHECK(o.child.reaped);
  CHECK(o.child.stdout_eof);
  CHECK(o.child.stderr_eof);
  CHECK(o.timings.confirmed != 0);
  CHECK(o.seat() == SeatDisposition::release);
  CHECK_FALSE(sys::pid_exists(static_cast<pid_t>(o.child.pid)));
}

}  // namespace

TEST_SUITE("lease") {
  TEST_CASE("L1: a child is killed at its lane's lease bound before the deadline, revoked with cause lease_lost") {
    auto opt = wedge(5'000);
    const sys::MonoNs bound = mono_now_ns() + 300 * kNsPerMs;
    opt.lease = std::make_shared<LeaseBound>(bound);
    Supervisor sup(opt);
    const Outcome o = sup.run();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::revoked, (std::string(outcome_name(o.kind)) + ": " + o.reason));
    CHECK(o.revoke_cause == "lease_lost");
    CHECK_MESSAGE(o.reason.find("lease was not renewed in time") != std::string::npos, o.reason);
    CHECK(o.child.signal == SIGKILL);
    const double after_bound_ms = sys::ns_to_ms(o.timings.kill - bound);
    test::report("lease bound kill", "bound to kill", after_bound_ms, "ms");
    CHECK(after_bound_ms >= 0);
    CHECK(after_bound_ms < 100);
    CHECK(o.timings.kill < opt.deadline);
    check_confirmed_and_gone(o);
  }

  TEST_CASE("L1: a lease bound moved later keeps the child alive past the first bound; it dies at the moved one") {
    auto opt = wedge(5'000);
    const sys::MonoNs first = mono_now_ns() + 400 * kNsPerMs;
    auto lease = std::make_shared<LeaseBound>(first);
    opt.lease = lease;
    // The renewal lands once the child exists (a fact the supervisor
    // announces), long before the first bound.
    sys::MonoNs moved = 0;
    test::Latch renewed;
    opt.on_spawned = [&](std::int64_t) {
      moved = mono_now_ns() + 1'200 * kNsPerMs;
      lease->move_to(moved);
      renewed.open();
    };
    Supervisor sup(opt);
    const Outcome o = sup.run();
    REQUIRE(renewed.wait(1'000));
    REQUIRE(moved > first);
    REQUIRE_MESSAGE(o.kind == OutcomeKind::revoked, (std::string(outcome_name(o.kind)) + ": " + o.reason));
    CHECK(o.revoke_cause == "lease_lost");
    CHECK_MESSAGE(o.timings.kill >= moved, "killed ", sys::ns_to_ms(moved - o.timings.kill),
                  " ms before the moved bound");
    CHECK(sys::ns_to_ms(o.timings.kill - moved) < 100);
    test::report("lease bound kill", "moved bound to kill", sys::ns_to_ms(o.timings.kill - moved), "ms");
    // A bound never moves earlier.
    lease->move_to(first);
    CHECK(lease->get() == moved);
    check_confirmed_and_gone(o);
  }

  TEST_CASE("L1 D1: the deadline is never extended by a lease bound later than it, nor by one moved past it") {
    auto opt = wedge(300);
    auto lease = std::make_shared<LeaseBound>(opt.deadline + 2'000 * kNsPerMs);
    opt.lease = lease;
    opt.on_spawned = [lease](std::int64_t) { lease->move_to(mono_now_ns() + 10'000 * kNsPerMs); };
    Supervisor sup(opt);
    const Outcome o = sup.run();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::deadline_killed, (std::string(outcome_name(o.kind)) + ": " + o.reason));
    CHECK(o.revoke_cause.empty());
    const double overrun_ms = sys::ns_to_ms(o.timings.kill - opt.deadline);
    CHECK(overrun_ms >= 0);
    CHECK(overrun_ms < 100);
    check_confirmed_and_gone(o);
  }

  TEST_CASE("L1: a cold child whose lease bound already passed is not spawned") {
    auto opt = wedge(5'000);
    opt.lease = std::make_shared<LeaseBound>(mono_now_ns() - kNsPerMs);
    Supervisor sup(opt);
    const Outcome o = sup.run();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::revoked, (std::string(outcome_name(o.kind)) + ": " + o.reason));
    CHECK(o.revoke_cause == "lease_lost");
    CHECK_FALSE(o.dispatched);
    CHECK(o.child.pid == 0);
  }

  TEST_CASE("L2: the job's lease bound and the lease frame round-trip; a bound that is not positive is refused") {
    protocol::Job job;
    job.parent_pid = 1;
    job.repo = "/r";
    job.remote = "https://h/r.git";
    job.updates = {RefUpdate{"refs/heads/main", std::string(40, 'a')}};
    job.deadline_mono_ns = 5;
    job.scratch_dir = "/tmp/s";
    job.lease_bound_mono_ns = 4;
    const auto body = protocol::encode(protocol::ParentMessage{job});
    REQUIRE(body.has_value());
    const auto back = protocol::decode_parent(*body);
    REQUIRE(back.has_value());
    CHECK(std::get<protocol::Job>(*back).lease_bound_mono_ns == 4);
    const auto lease = protocol::encode(protocol::ParentMessage{protocol::Lease{123}});
    REQUIRE(lease.has_value());
    CHECK(*lease == R"({"bound_mono_ns":123,"type":"lease"})");
    const auto lease_back = protocol::decode_parent(*lease);
    REQUIRE(lease_back.has_value());
    CHECK(std::get<protocol::Lease>(*lease_back).bound_mono_ns == 123);
    CHECK_FALSE(protocol::decode_parent(R"({"type":"lease","bound_mono_ns":0})").has_value());
    CHECK_FALSE(protocol::decode_parent(R"({"type":"lease"})").has_value());
    CHECK_FALSE(protocol::decode_parent(R"({"type":"lease","bound_mono_ns":1,"extra":1})").has_value());
  }
}

}  // namespace integration_lease_bound
