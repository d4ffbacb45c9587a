// protocol-session.cpp — rule P1: every parent-side state machine violation.
#include <doctest/doctest.h>

#include "protocol/session.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_protocol_session {

using namespace courier;
using namespace courier::protocol;

namespace {
const std::string kOid(40, 'a');
Hello hello() { return Hello{kProtocolVersion, 7, {}, {}, std::nullopt}; }
Mint mint() { return Mint{"advertisement", "GET", "https://h/r.git/info/refs?service=git-receive-pack", {}, {}}; }
ResultMsg result(RefStatus status = RefStatus::ok) {
  return ResultMsg{wire::DeliveryStatus::delivered, {RefResult{"refs/heads/main", status, {}, {}}}, {}, {}, {}, {}};
}
ParentSession session(bool authenticated = true) {
  ParentSession::Config c;
  c.gated_refs = {"refs/heads/main"};
  c.authenticated = authenticated;
  return ParentSession(c);
}
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

  TEST_CASE("P1: a result that says delivered while a ref of it was not ok is a violation (T4 for every ref)") {
    for (RefStatus each : {RefStatus::ng, RefStatus::rejected, RefStatus::not_attempted, RefStatus::unknown}) {
      CAPTURE(enum_word(each));
      auto s = session();
      REQUIRE(s.accept(hello()));
      auto r = s.accept(result(each));
      REQUIRE_FALSE(r);
      CHECK(r.error().code == Errc::result_ref_mismatch);
    }
    ParentSession::Config two;
    two.gated_refs = {"refs/heads/main", "refs/tags/v1"};
    ParentSession s(two);
    REQUIRE(s.accept(hello()));
    ResultMsg r{
        wire::DeliveryStatus::up_to_date,
        {RefResult{"refs/heads/main", RefStatus::up_to_date, {}, {}}, RefResult{"refs/tags/v1", RefStatus::ok, {}, {}}},
        {},
        {},
        {},
        {}};
    auto up = s.accept(r);
    REQUIRE_FALSE(up);
    CHECK(up.error().code == Errc::result_ref_mismatch);
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

  TEST_CASE("P1: a result naming another ref than the job's is a violation, whatever its status") {
    for (auto status : {wire::DeliveryStatus::delivered, wire::DeliveryStatus::up_to_date,
                        wire::DeliveryStatus::rejected, wire::DeliveryStatus::failed}) {
      CAPTURE(wire::status_word(status));
      for (const char* ref : {"refs/heads/EVIL", "refs/heads/main ", "refs/heads/Main", "refs/heads/mai", ""}) {
        CAPTURE(ref);
        auto s = session();
        REQUIRE(s.accept(hello()));
        ResultMsg r{status, {RefResult{ref, RefStatus::ok, {}, {}}}, {}, {}, {}, {}};
        auto ok = s.accept(r);
        CHECK_MESSAGE(!ok.has_value(), "a result for another ref was taken as this job's");
        if (!ok) CHECK(ok.error().code == Errc::result_ref_mismatch);
        CHECK(s.state() == ParentSession::State::finished);
      }
    }
  }

  TEST_CASE("P1: a result must name every ref of the job in its order, even a failure") {
    ParentSession::Config two;
    two.gated_refs = {"refs/heads/main", "refs/tags/v1"};
    const RefResult main{"refs/heads/main", RefStatus::not_attempted, {}, {}};
    const RefResult tag{"refs/tags/v1", RefStatus::not_attempted, {}, {}};
    for (const auto& refs : std::vector<std::vector<RefResult>>{{main}, {tag, main}, {main, tag, tag}}) {
      auto s = ParentSession(two);
      REQUIRE(s.accept(hello()));
      auto r = s.accept(ResultMsg{wire::DeliveryStatus::transport_failed, refs, "tls", {}, {}, {}});
      REQUIRE_FALSE(r);
      CHECK(r.error().code == Errc::result_ref_mismatch);
    }
    auto t = ParentSession(two);
    REQUIRE(t.accept(hello()));
    CHECK(t.accept(ResultMsg{wire::DeliveryStatus::transport_failed, {main, tag}, "tls", {}, {}, {}}));
  }

  TEST_CASE("P1: a warm child's session takes the ref and object bound with its job") {
    ParentSession s(ParentSession::Config{});
    REQUIRE(s.accept(hello()));
    s.bind({"refs/heads/main"}, false);
    CHECK(s.accept(result()));
    ParentSession t(ParentSession::Config{});
    REQUIRE(t.accept(hello()));
    t.bind({"refs/heads/other"}, false);
    auto r = t.accept(result());
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::result_ref_mismatch);
  }
}

}  // namespace unit_protocol_session
