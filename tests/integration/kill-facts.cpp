// kill-facts.cpp — what a delivery ended without a result still says
// (J4, J5): the remote's advertised old id in the outcome and the journal,
// the pack engine, the bytes and the phases its frames named; a child
// killed from outside reported as child_signalled, never protocol_fault.
// The shipped binary is the child, the TLS fixture server in front of git
// http-backend holds the POST (or a minter holds the child before it), and
// every kill is synchronised on those facts.
#include <doctest/doctest.h>
#include <signal.h>

#include <atomic>
#include <string>

#include "courier/courier.hpp"
#include "journal/journal.hpp"
#include "push_setup.hpp"
#include "service_support.hpp"
#include "support.hpp"
#include "sys/clock.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_kill_facts {

using namespace courier;
using sys::kNsPerMs;

namespace {

struct Setup : test::JournalledSetup {
  std::string base;  // the remote's ref before the delivery under test

  // The remote's main already at HEAD~1, delivered through the journal.
  Setup() : JournalledSetup(3) {
    server.create_bare_repo("r");
    base = rev("HEAD~1");
    Executor ex(journalled());
    Outcome o = ex.submit(with_id("base", base)).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    REQUIRE(remote_ref("r") == base);
  }

  // The old id the journal's `step` entry of `id` names ("" when none).
  std::string journalled_old(const std::string& id, journal::Step step) const {
    const auto e = record(id).last(step);
    return e ? journal::detail_text(e->detail, "old_oid") : std::string();
  }
};

// The child's pid, from the dispatched event.
struct ChildPid {
  std::shared_ptr<std::atomic<std::int64_t>> pid = std::make_shared<std::atomic<std::int64_t>>(0);
  void watch(DeliveryRequest& r) const {
    r.on_event = [p = pid](const DeliveryEvent& e) {
      if (e.kind == DeliveryEvent::Kind::dispatched) p->store(e.child_pid);
    };
  }
};

}  // namespace

TEST_SUITE("push") {
  TEST_CASE(
      "J4: a delivery killed at the deadline or revoked while the server holds its POST names the remote's "
      "advertised old id in its outcome and in the journal's advertised and finished entries") {
    for (const char* how : {"deadline", "revoke"}) {
      CAPTURE(how);
      Setup s;
      s.server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
      Executor ex(s.journalled());
      const bool by_deadline = std::string(how) == "deadline";
      const std::string id = std::string("held-") + how;
      auto h = ex.submit(s.with_id(id, s.tip, by_deadline ? 3'000 : 30'000));
      REQUIRE(s.server.wait_for_held(20'000).has_value());
      if (!by_deadline) h.revoke("the buyer cancelled");
      Outcome o = h.wait();
      CHECK_MESSAGE(o.kind == (by_deadline ? OutcomeKind::deadline_killed : OutcomeKind::revoked), o.reason);
      CHECK(o.remote_effect == RemoteEffect::possible);
      CHECK_MESSAGE(o.old_oid == std::optional<std::string>(s.base), "a killed outcome dropped the old id");
      CHECK(s.journalled_old(id, journal::Step::advertised) == s.base);
      CHECK(s.journalled_old(id, journal::Step::post_started) == s.base);
      CHECK_MESSAGE(s.journalled_old(id, journal::Step::finished) == s.base,
                    "the journal's finished entry of a killed delivery has no old id");
      s.server.release();
    }
  }

  TEST_CASE(
      "J4: a delivery killed at the deadline after the advertisement but before it asked to begin the POST names "
      "the advertised old id, journalled at the advertisement") {
    Setup s;
    test::Latch parked, release;
    DeliveryRequest r = s.with_id("minting", s.tip, 2'000);
    r.mint_binds_payload = false;
    // The POST's token is never minted: the child waits for it after the
    // advertisement and the pack, before its check of the POST.
    r.mint = [parked, release](const MintRequest& m) {
      if (m.leg == "receive-pack") {
        parked.open();
        release.wait(60'000);
        return MintAnswer{std::nullopt, "too late"};
      }
      return MintAnswer{std::string("Authorization: Bearer test"), ""};
    };
    Executor ex(s.journalled());
    auto h = ex.submit(r);
    REQUIRE(parked.wait(20'000));
    // The advertisement's entry is written off the supervising loop.
    CHECK(test::wait_for_fact([&] { return s.journalled_old("minting", journal::Step::advertised) == s.base; }, 4'000));
    Outcome o = h.wait();
    release.open();
    CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
    CHECK(o.remote_effect == RemoteEffect::none);
    CHECK_MESSAGE(o.old_oid == std::optional<std::string>(s.base), "a kill before the POST dropped the old id");
    CHECK_FALSE(s.record("minting").last(journal::Step::post_started).has_value());
    CHECK(s.journalled_old("minting", journal::Step::finished) == s.base);
    CHECK(o.pack_engine.has_value());
    CHECK(o.advertise_ms.has_value());
    CHECK(o.pack_ms.has_value());
    CHECK_FALSE(o.upload_ms.has_value());
    CHECK(s.posts("r") == 1);  // the base delivery's only
  }

  TEST_CASE(
      "J5: a child SIGKILLed from outside while the server holds its POST is child_signalled with signal 9 and a "
      "hint, never protocol_fault; the seat is released") {
    Setup s;
    s.server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    Executor ex(s.journalled());
    DeliveryRequest r = s.with_id("oom", s.tip);
    ChildPid child;
    child.watch(r);
    auto h = ex.submit(r);
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    REQUIRE(test::wait_for_fact([&] { return child.pid->load() > 0; }, 4'000));
    // What the OOM killer does: SIGKILL to the child, from another process.
    REQUIRE(::kill(static_cast<pid_t>(child.pid->load()), SIGKILL) == 0);
    Outcome o = h.wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::child_signalled, outcome_name(o.kind) << ": " << o.reason);
    CHECK(o.child.signal == std::optional<int>(SIGKILL));
    CHECK(o.reason.find("signal 9 (SIGKILL) that git-courier did not send") != std::string::npos);
    CHECK(o.reason.find("OOM killer") != std::string::npos);
    CHECK(o.child.reaped);
    CHECK(o.seat() == SeatDisposition::release);
    CHECK(o.remote_effect == RemoteEffect::possible);
    CHECK(o.old_oid == std::optional<std::string>(s.base));
    CHECK(o.bytes_sent.value_or(0) > 0);
    CHECK(journal::detail_text(s.record("oom").last(journal::Step::finished)->detail, "kind") == "child_signalled");
    s.server.release();
  }

  TEST_CASE(
      "J5: a deadline kill mid-upload is deadline_killed with the pack engine, the bytes sent and the phase "
      "timings its frames named") {
    Setup s;
    s.server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    Executor ex(s.journalled());
    auto h = ex.submit(s.with_id("mid-upload", s.tip, 2'000));
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    Outcome o = h.wait();
    s.server.release();
    CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, outcome_name(o.kind) << ": " << o.reason);
    CHECK_MESSAGE(o.pack_engine.has_value(), "a killed outcome reports no pack engine");
    CHECK(o.bytes_sent.value_or(0) > 0);
    REQUIRE(o.advertise_ms.has_value());
    REQUIRE(o.pack_ms.has_value());
    REQUIRE(o.upload_ms.has_value());
    MESSAGE("measured: advertise " << *o.advertise_ms << " ms, pack " << *o.pack_ms << " ms, upload " << *o.upload_ms
                                   << " ms (until the kill), " << *o.bytes_sent << " bytes, engine " << *o.pack_engine);
    // The upload ran from the POST's clearance to the kill at the deadline.
    CHECK(*o.upload_ms > 0);
    CHECK(static_cast<sys::MonoNs>(*o.upload_ms) * kNsPerMs <= o.timings.kill - o.timings.post_started + kNsPerMs);
  }
}

}  // namespace integration_kill_facts
