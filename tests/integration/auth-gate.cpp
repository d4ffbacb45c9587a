// auth-gate.cpp — the parent's mint gate (rules A2, A3, A4): it mints
// only for an authenticated delivery, for one of its two legs, before the
// deadline, under the mint cap and while authority holds; a token minted for
// a delivery revoked while the minter ran is dropped. Then the same gate as
// the supervisor's mint callback, against a real child stand-in.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "auth/ed25519_minter.hpp"
#include "auth/minter.hpp"
#include "supervisor/host_calls.hpp"
#include "supervisor/supervisor.hpp"
#include "auth_support.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_auth_gate {

using namespace courier;
using namespace courier::auth;
using namespace courier::test::auth_support;
using supervisor::AuthorityAnswer;
using supervisor::MintAnswer;
using sys::kNsPerMs;
using sys::mono_now_ns;

namespace {

class CountingMinter : public Minter {
 public:
  Result<std::string> mint(const LegRequest& request) override {
    ++calls;
    last_url = request.url;
    return "Authorization: Bearer test-" + std::to_string(calls.load());
  }
  std::atomic<int> calls{0};
  std::string last_url;
};

// Parks inside its "signing" call until released, so a test can revoke the
// delivery at exactly that point.
class ParkedMinter : public Minter {
 public:
  Result<std::string> mint(const LegRequest&) override {
    entered.open();
    if (!release.wait(10'000)) return fail(Errc::invalid_value, "never released");
    ++produced;
    return std::string("Authorization: Bearer parked-token");
  }
  test::Latch entered;
  test::Latch release;
  std::atomic<int> produced{0};
};

class FixedMinter : public Minter {
 public:
  explicit FixedMinter(std::string header) : header_(std::move(header)) {}
  Result<std::string> mint(const LegRequest&) override { return header_; }

 private:
  std::string header_;
};

AuthorityFn always(bool ok, std::string reason = {}) {
  return [ok, reason](const std::string&) { return AuthorityAnswer{ok, reason}; };
}

}  // namespace

TEST_SUITE("auth") {
  TEST_CASE("gate: a correct leg of an authenticated delivery is minted; the minter sees the exact URL") {
    auto minter = std::make_shared<CountingMinter>();
    MintGate gate(minter, context(), always(true));
    const MintAnswer a = gate.answer(mint_get());
    REQUIRE_MESSAGE(a.header, a.refused);
    CHECK(*a.header == "Authorization: Bearer test-1");
    CHECK_FALSE(a.foreign);
    CHECK_FALSE(a.revoked);
    CHECK(minter->last_url == kAdvertisementUrl);
    CHECK(gate.answer(mint_post()).header);
    CHECK(gate.minted() == 2);
  }

  TEST_CASE("gate: an unauthenticated delivery gets no token, and its minter is never called") {
    auto minter = std::make_shared<CountingMinter>();
    MintGateOptions off;
    off.authenticated = false;
    MintGate gate(minter, context(), always(true), off);
    MintAnswer a = gate.answer(mint_get());
    CHECK_FALSE(a.header);
    CHECK(a.refused.find("no credentials") != std::string::npos);
    MintGate no_minter(nullptr, context(), always(true));
    a = no_minter.answer(mint_get());
    CHECK_FALSE(a.header);
    CHECK_FALSE(a.refused.empty());
    CHECK(minter->calls == 0);
  }

  TEST_CASE("gate: a foreign destination is flagged for a protocol fault; a wrong leg is a plain refusal") {
    auto minter = std::make_shared<CountingMinter>();
    MintGate gate(minter, context(), always(true));
    MintAnswer a = gate.answer(mint_get("https://evil.example/team/r.git/info/refs?service=git-receive-pack"));
    CHECK_FALSE(a.header);
    CHECK(a.foreign);
    CHECK(a.refused.find("evil.example") != std::string::npos);
    a = gate.answer(mint_get(kRemote + "/info/refs?service=git-upload-pack"));
    CHECK_FALSE(a.header);
    CHECK_FALSE(a.foreign);
    CHECK_FALSE(a.refused.empty());
    a = gate.answer(mint_post(kReceivePackUrl, std::nullopt));
    CHECK_FALSE(a.header);
    CHECK_FALSE(a.foreign);
    CHECK(minter->calls == 0);
  }

  TEST_CASE("gate: nothing is minted at or after the deadline (monotonic clock)") {
    auto minter = std::make_shared<CountingMinter>();
    auto c = context(60'000);
    std::atomic<sys::MonoNs> now{mono_now_ns()};
    MintGateOptions o;
    o.mono_clock = [&now] { return now.load(); };
    MintGate gate(minter, c, always(true), o);
    CHECK(gate.answer(mint_get()).header);
    now = c.deadline;
    const MintAnswer a = gate.answer(mint_get());
    CHECK_FALSE(a.header);
    CHECK(a.refused.find("deadline") != std::string::npos);
    CHECK(minter->calls == 1);

    // A deadline that passes while the minter runs drops its token.
    class SlowMinter : public Minter {
     public:
      explicit SlowMinter(std::atomic<sys::MonoNs>& clock, sys::MonoNs to) : clock_(clock), to_(to) {}
      Result<std::string> mint(const LegRequest&) override {
        clock_ = to_;  // time moves on while "signing"
        return std::string("Authorization: Bearer late");
      }

     private:
      std::atomic<sys::MonoNs>& clock_;
      sys::MonoNs to_;
    };
    now = mono_now_ns();
    MintGate slow(std::make_shared<SlowMinter>(now, c.deadline + 1), c, always(true), o);
    const MintAnswer late = slow.answer(mint_get());
    CHECK_FALSE(late.header);
    CHECK(late.refused.find("deadline") != std::string::npos);
  }

  TEST_CASE("A2: the gate mints at most kMaxMints tokens per delivery") {
    auto minter = std::make_shared<CountingMinter>();
    MintGate gate(minter, context(), always(true));
    for (int i = 0; i < protocol::kMaxMints; ++i) REQUIRE(gate.answer(mint_get()).header);
    const MintAnswer over = gate.answer(mint_get());
    CHECK_MESSAGE(!over.header.has_value(), "a token was minted past the mint cap");
    CHECK(over.refused.find("more than " + std::to_string(protocol::kMaxMints)) != std::string::npos);
    CHECK(minter->calls == protocol::kMaxMints);
    CHECK(gate.requests() == protocol::kMaxMints + 1);
  }

  TEST_CASE("gate: authority refused before minting: no mint, and the delivery is revoked") {
    auto minter = std::make_shared<CountingMinter>();
    MintGate gate(minter, context(), always(false, "the buyer cancelled"));
    const MintAnswer a = gate.answer(mint_get());
    CHECK_FALSE(a.header);
    CHECK(a.revoked);
    CHECK(a.refused.find("the buyer cancelled") != std::string::npos);
    CHECK(minter->calls == 0);
  }

  TEST_CASE("A3: authority revoked while the minter is parked inside its signing call: the token is dropped") {
    auto minter = std::make_shared<ParkedMinter>();
    std::atomic<bool> holds{true};
    std::atomic<int> asked{0};
    auto authority = [&](const std::string& phase) {
      ++asked;
      CHECK(phase == "mint");
      return AuthorityAnswer{holds.load(), holds.load() ? "" : "turn revoked by the host"};
    };
    MintGate gate(minter, context(), authority);
    MintAnswer a;
    std::thread t([&] { a = gate.answer(mint_get()); });
    REQUIRE(minter->entered.wait(10'000));
    holds = false;  // the delivery loses its turn while the token is being made
    minter->release.open();
    t.join();
    CHECK(minter->produced == 1);  // a token was made...
    CHECK_FALSE(a.header);         // ...and never handed out
    CHECK(a.revoked);
    CHECK(a.refused.find("turn revoked by the host") != std::string::npos);
    CHECK(asked == 2);  // before and after the mint
    CHECK(gate.minted() == 0);
  }

  TEST_CASE("gate: a minter's header that could smuggle a second line is refused") {
    for (const std::string& header :
         std::vector<std::string>{"Authorization: Bearer a\r\nX-Evil: 1", "Authorization: Bearer a\n",
                                  "X-Other: Bearer a", std::string("Authorization: a\0b", 18)}) {
      MintGate gate(std::make_shared<FixedMinter>(header), context(), always(true));
      const MintAnswer a = gate.answer(mint_get());
      CHECK_FALSE(a.header);
      CHECK(a.refused.find("malformed header") != std::string::npos);
    }
  }

  TEST_CASE("make_mint_callback: usable as SupervisorOptions::mint; the Ed25519 minter behind it") {
    TestKey k;
    std::function<MintAnswer(const MintRequest&)> cb =
        make_mint_callback(std::make_shared<Ed25519Minter>(k.key), context(), nullptr);
    supervisor::SupervisorOptions o;
    o.mint = cb;
    const MintAnswer a = o.mint(mint_get());
    REQUIRE_MESSAGE(a.header, a.refused);
    CHECK(a.header->rfind("Authorization: Bearer ey", 0) == 0);
  }

  TEST_CASE(
      "supervisor: a child asking for a foreign destination is a protocol fault; an authority refusal at mint "
      "revokes") {
    auto standin = [](const std::string& remote) {
      supervisor::SupervisorOptions o;
      o.child_program = COURIER_STANDIN;
      o.job.repo = "mint-then-wedge";  // hello, one advertisement mint for job.remote, then block
      o.job.remote = remote;
      o.job.updates = {RefUpdate{kRef, std::string(40, 'a')}};
      o.job.authenticated = true;
      o.deadline = mono_now_ns() + 20'000 * kNsPerMs;
      o.cgroup = supervisor::CgroupMode::off;
      o.on_stderr = [](std::string_view) {};
      return o;
    };
    const std::string ours = "https://127.0.0.1:9/r.git";

    SUBCASE("foreign") {
      // The child's job names another host than the delivery the gate guards.
      auto o = standin("https://127.0.0.2:9/r.git");
      auto minter = std::make_shared<CountingMinter>();
      o.mint = make_mint_callback(minter, context(60'000, ours), always(true));
      const auto start = mono_now_ns();
      supervisor::Supervisor sup(o);
      const Outcome out = sup.run();
      CHECK_MESSAGE(out.kind == OutcomeKind::protocol_fault, outcome_name(out.kind), " ", out.reason);
      CHECK_MESSAGE(out.reason.find("foreign destination") != std::string::npos, out.reason);
      CHECK(out.child.reaped);
      CHECK(minter->calls == 0);
      CHECK(mono_now_ns() - start < 10'000 * kNsPerMs);  // ended by the fault, not the deadline
    }
    SUBCASE("authority refuses at mint") {
      auto o = standin(ours);
      auto minter = std::make_shared<CountingMinter>();
      o.mint = make_mint_callback(minter, context(60'000, ours), always(false, "seat lost"));
      supervisor::Supervisor sup(o);
      const Outcome out = sup.run();
      CHECK_MESSAGE(out.kind == OutcomeKind::revoked, outcome_name(out.kind), " ", out.reason);
      CHECK_MESSAGE(out.reason.find("seat lost") != std::string::npos, out.reason);
      CHECK(out.child.reaped);
      CHECK(minter->calls == 0);
    }
    SUBCASE("a correct leg is minted and answered; revoking then ends the delivery") {
      auto o = standin(ours);
      auto minter = std::make_shared<CountingMinter>();
      test::Latch minted;
      auto gate = make_mint_callback(minter, context(60'000, ours), always(true));
      o.mint = [gate, minted](const MintRequest& m) {
        MintAnswer a = gate(m);
        if (a.header) minted.open();
        return a;
      };
      supervisor::Supervisor sup(o);
      Outcome out;
      std::thread t([&] { out = sup.run(); });
      REQUIRE(minted.wait(10'000));
      sup.revoke("test done");
      t.join();
      CHECK_MESSAGE(out.kind == OutcomeKind::revoked, outcome_name(out.kind), " ", out.reason);
      CHECK(minter->calls == 1);
    }
    CHECK(supervisor::HostCalls::wait_idle(5'000));
  }
}

}  // namespace integration_auth_gate
