// unit-protocol-session.cpp — rule P1: every parent-side state machine violation.
#include <doctest/doctest.h>

#include "protocol/session.hpp"

using namespace courier;
using namespace courier::protocol;

namespace {
const std::string kOid(40, 'a');
Hello hello() { return Hello{kProtocolVersion, 7, {}, {}, std::nullopt}; }
Mint mint() { return Mint{"advertisement", "GET", "https://h/r.git/info/refs?service=git-receive-pack", {}, {}}; }
ResultMsg result(std::optional<std::string> oid = kOid) {
  return ResultMsg{"delivered", "refs/heads/main", oid, {}, {}, {}, {}, {}};
}
ParentSession session(bool authenticated = true) { return ParentSession({kOid, authenticated}); }
}  // namespace

TEST_SUITE("protocol") {
  TEST_CASE("P1: a well-behaved conversation is accepted to the end") {
    auto s = session();
    CHECK(s.accept(hello()));
    CHECK(s.accept(Check{"advertisement"}));
    CHECK(s.accept(mint()));
    CHECK(s.accept(Progress{"pack", 1, 2}));
    CHECK(s.accept(result()));
    CHECK(s.state() == ParentSession::State::finished);
  }

  TEST_CASE("P1: anything before hello is a violation") {
    for (ChildMessage m : std::vector<ChildMessage>{Check{"x"}, mint(), Progress{"p", 0, 0}, result()}) {
      auto s = session();
      auto r = s.accept(m);
      REQUIRE_FALSE(r);
      CHECK(r.error().code == Errc::hello_not_first);
    }
  }

  TEST_CASE("P1: a second hello is a violation") {
    auto s = session();
    REQUIRE(s.accept(hello()));
    auto r = s.accept(hello());
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::second_hello);
  }

  TEST_CASE("P1: a hello with another protocol version is a violation") {
    auto s = session();
    auto h = hello();
    h.version = kProtocolVersion + 1;
    auto r = s.accept(h);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::version_mismatch);
  }

  TEST_CASE("P1: a mint for an unauthenticated job is a violation") {
    auto s = session(false);
    REQUIRE(s.accept(hello()));
    auto r = s.accept(mint());
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::mint_unauthenticated);
  }

  TEST_CASE("P1: mints over kMaxMints are a violation; exactly kMaxMints are allowed") {
    auto s = session();
    REQUIRE(s.accept(hello()));
    for (int i = 0; i < kMaxMints; ++i) REQUIRE(s.accept(mint()));
    auto r = s.accept(mint());
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::mints_over_cap);
  }

  TEST_CASE("P1: a result for an object nobody gated is a violation") {
    auto s = session();
    REQUIRE(s.accept(hello()));
    auto r = s.accept(result(std::string(40, 'b')));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::result_oid_mismatch);
  }

  TEST_CASE("P1: a second result and any message after the result are violations") {
    auto s = session();
    REQUIRE(s.accept(hello()));
    REQUIRE(s.accept(result()));
    auto r = s.accept(result());
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::second_result);

    auto t = session();
    REQUIRE(t.accept(hello()));
    REQUIRE(t.accept(result()));
    auto r2 = t.accept(Progress{"pack", 1, 1});
    REQUIRE_FALSE(r2);
    CHECK(r2.error().code == Errc::message_after_result);
  }

  TEST_CASE("P1: a failure result without an oid is accepted") {
    auto s = session();
    REQUIRE(s.accept(hello()));
    ResultMsg r{"transport_failed", "refs/heads/main", {}, {}, "tls", {}, {}, {}};
    CHECK(s.accept(r));
  }
}
