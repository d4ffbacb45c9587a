// lease-wait.cpp — rule L3's lease wait holds no worker: two hosts (two
// Executors with host ids of their own and lane directories of their own)
// share one real PostgreSQL state (a throwaway cluster, tests/support/pg_support.hpp)
// and the TLS fixture server. While one host's delivery waits for a lane
// lease the other host holds, a delivery on a free lane still runs, even
// with a single worker; a parked wait that is revoked, or still parked at
// shutdown, is finished by a worker (J5) before the destructor returns.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "courier/courier.hpp"
#include "pg_support.hpp"
#include "push_setup.hpp"
#include "service_support.hpp"
#include "support.hpp"
#include "sys/clock.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_lease_wait {

using namespace courier;

namespace {

// How long a step that needs no lease wait may take here: a delivery to a
// loopback server, or an event that follows one.
constexpr long kStepMs = 20'000;
// A delivery on a free lane, beside a lease wait (one push of a small repository).
constexpr long kFreeLaneMs = 10'000;

ExecutorOptions host_options(test::PushSetup& s, const test::PgCluster& pg, const std::string& name) {
  ExecutorOptions o = s.executor_options(CgroupMode::off);
  o.state = pg.url();
  o.host_id = "host-" + name;
  o.lane_dir = s.dir.path() + "/lanes-" + name;
  return o;
}

DeliveryRequest named(test::PushSetup& s, const std::string& id, const std::string& repo) {
  DeliveryRequest r = s.request(repo, s.tip, 120'000);
  r.id = id;
  r.ref = "refs/heads/" + id;  // each its own ref: each a real update
  return r;
}

}  // namespace

TEST_SUITE("lease") {
  TEST_CASE(
      "L3: with one worker, a delivery on a free lane is dispatched and delivered while another waits for a lease "
      "held by another host; the waiting one delivers once the lease is released") {
    PG_CLUSTER_OR_SKIP(pg);
    test::PushSetup s;
    s.server.create_bare_repo("a");
    s.server.create_bare_repo("b");
    s.server.hold(test::RequestMatch::next("POST", "/a.git/git-receive-pack"));
    Executor host_b(host_options(s, pg, "b"));
    auto opts_a = host_options(s, pg, "a");
    opts_a.workers = 1;
    Executor host_a(opts_a);

    // Host B holds lane a's lease: its delivery is at its POST, held.
    auto held = host_b.submit(named(s, "b-on-a", "a"));
    REQUIRE(s.server.wait_for_held(kStepMs).has_value());

    // Host A's only worker seats X on lane a; X waits for B's lease.
    auto x = host_a.submit(named(s, "x-on-a", "a"));
    const bool x_waits = test::wait_for_fact(
        [&] {
          return x.state() == DeliveryState::pending && x.last_pending().holder.find("host-b") != std::string::npos;
        },
        kStepMs);
    REQUIRE_MESSAGE(x_waits, "x never said it waits for host-b's lease: " << x.last_pending().holder);

    // Y on the free lane b is dispatched and delivered while X still waits.
    // A push of this size takes well under a second here (the report says
    // how long it took); a worker held by X's wait would never dispatch Y,
    // and the case stops on that fact instead of going on to wait for the
    // lease as well.
    const auto t0 = sys::mono_now_ns();
    auto y = host_a.submit(named(s, "y-on-b", "b"));
    const auto oy = y.wait_for(std::chrono::milliseconds(kFreeLaneMs));
    const DeliveryState x_when_y_ended = x.state();
    test::report("lease", "a free lane's delivery, beside a lease wait, one worker",
                 sys::ns_to_ms(sys::mono_now_ns() - t0), "ms");
    REQUIRE_MESSAGE(oy.has_value(),
                    "y on a free lane did not finish within " << kFreeLaneMs << " ms beside x's lease wait");
    CHECK_MESSAGE(oy->kind == OutcomeKind::delivered, oy->reason);
    CHECK(x_when_y_ended == DeliveryState::pending);
    CHECK(s.remote_ref("b", "refs/heads/y-on-b") == s.tip);

    // B's POST goes on; its lease is released and X takes it and delivers.
    s.server.release();
    const Outcome ob = held.wait();
    CHECK_MESSAGE(ob.kind == OutcomeKind::delivered, ob.reason);
    const auto ox = x.wait_for(std::chrono::milliseconds(kStepMs));
    REQUIRE_MESSAGE(ox.has_value(), "x did not take the released lease within " << kStepMs << " ms");
    CHECK_MESSAGE(ox->kind == OutcomeKind::delivered, outcome_name(ox->kind) << ": " << ox->reason);
    CHECK(s.remote_ref("a", "refs/heads/x-on-a") == s.tip);
    CHECK(s.posts("a") == 2);
  }

  TEST_CASE(
      "L3 J5: a delivery parked on a lease wait that is revoked ends cancelled_no_dispatch and frees its seat; one "
      "still parked when its executor shuts down ends cancelled too, before the destructor returns") {
    PG_CLUSTER_OR_SKIP(pg);
    test::PushSetup s;
    s.server.create_bare_repo("a");
    s.server.hold(test::RequestMatch::next("POST", "/a.git/git-receive-pack"));
    Executor host_b(host_options(s, pg, "b"));
    auto held = host_b.submit(named(s, "b-on-a", "a"));
    REQUIRE(s.server.wait_for_held(kStepMs).has_value());
    auto waits_for_b = [](const DeliveryHandle& h) {
      return h.state() == DeliveryState::pending && h.last_pending().holder.find("host-b") != std::string::npos;
    };
    DeliveryHandle second;
    {
      auto opts_a = host_options(s, pg, "a");
      opts_a.workers = 1;
      Executor host_a(opts_a);
      auto first = host_a.submit(named(s, "x1-on-a", "a"));
      REQUIRE(test::wait_for_fact([&] { return waits_for_b(first); }, kStepMs));
      CHECK(first.revoke("not needed any more") == RevokeAnswer::cancelled);
      const auto o1 = first.wait_for(std::chrono::milliseconds(kStepMs));
      REQUIRE_MESSAGE(o1.has_value(), "a revoked parked delivery was not finished within " << kStepMs << " ms");
      CHECK_MESSAGE(o1->kind == OutcomeKind::cancelled_no_dispatch, outcome_name(o1->kind) << ": " << o1->reason);
      CHECK_FALSE(o1->dispatched);
      // Its seat here went back: the next delivery on the lane is seated
      // and waits for host B's lease in its turn.
      second = host_a.submit(named(s, "x2-on-a", "a"));
      REQUIRE(test::wait_for_fact([&] { return waits_for_b(second); }, kStepMs));
    }
    const auto o2 = second.wait_for(std::chrono::milliseconds(0));
    CHECK_MESSAGE(o2.has_value(), "the executor returned from its destructor with a parked delivery unfinished");
    if (o2) {
      CHECK_MESSAGE(o2->kind == OutcomeKind::cancelled_no_dispatch, outcome_name(o2->kind) << ": " << o2->reason);
      CHECK_MESSAGE(o2->reason.find("shutting down") != std::string::npos, o2->reason);
    }
    s.server.release();
    CHECK_MESSAGE(held.wait().kind == OutcomeKind::delivered, "host b's delivery");
    CHECK(s.posts("a") == 1);
  }
}

}  // namespace integration_lease_wait
