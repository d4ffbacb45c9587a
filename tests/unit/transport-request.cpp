// transport-request.cpp — T4: the receive-pack command names exactly
// the advertised old id, the gated new id and the requested ref, and asks
// only for capabilities the server offered.
#include <doctest/doctest.h>

#include <string>

#include "data/transport/captures.hpp"
#include "transport/advertisement.hpp"
#include "transport/oid.hpp"
#include "transport/pktline.hpp"
#include "transport/request.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_transport_request {

using namespace courier;
using namespace courier::transport;
namespace cap = courier::test::captures;

namespace {

std::string pkt(std::string_view payload) { return *encode_pkt(payload); }

Advertisement offering(std::string_view caps, std::map<std::string, std::string, std::less<>> refs = {}) {
  Advertisement adv;
  adv.capabilities = parse_capabilities(caps);
  adv.refs = std::move(refs);
  return adv;
}

// One command: `ref` to `oid`.
std::vector<RefCommand> one(std::string_view ref, std::string_view oid) {
  return {RefCommand{std::string(ref), std::string(oid)}};
}

// The command packet's payload, checking the body is that packet plus a flush.
std::string command_of(const PushRequest& req) {
  PktDecoder d;
  d.feed(req.body_prefix);
  auto command = d.next();
  auto flush = d.next();
  REQUIRE(command.has_value());
  REQUIRE(command->has_value());
  REQUIRE(flush.has_value());
  REQUIRE(flush->has_value());
  CHECK((*flush)->kind == PktKind::flush);
  CHECK(d.buffered() == 0);
  return (*command)->payload;
}

}  // namespace

TEST_SUITE("transport") {
  TEST_CASE("T4: the request against a real server is byte for byte what that server accepted, bar the agent version") {
    // The capture's server had main at C1; the recorded request moved it to C2.
    auto adv = parse_advertisement(cap::kAdvRefAndHave);
    REQUIRE(adv.has_value());
    auto req = build_push_request(*adv, one("refs/heads/main", cap::kC2));
    REQUIRE(req.has_value());

    PktDecoder recorded;
    recorded.feed(cap::kUpdateRequestPrefixSideband);
    std::string expected = (**recorded.next()).payload;
    const std::string recorded_agent = "agent=git-courier/0.1.0";
    expected.replace(expected.find(recorded_agent), recorded_agent.size(), "agent=" + courier_agent());
    CHECK(req->body_prefix == pkt(expected) + "0000");
    CHECK(req->side_band);
    CHECK(req->commands[0].old_oid == cap::kC1);
    CHECK(req->commands[0].new_oid == cap::kC2);
    CHECK(req->commands[0].ref == "refs/heads/main");
  }

  TEST_CASE("T4: a ref the server does not have is created from the zero id, with every offered capability") {
    auto adv = parse_advertisement(cap::kAdvEmpty);
    REQUIRE(adv.has_value());
    auto req = build_push_request(*adv, one("refs/heads/main", cap::kC1));
    REQUIRE(req.has_value());
    CHECK(req->commands[0].old_oid == kZeroOid);
    CHECK(command_of(*req) == std::string(kZeroOid) + " " + std::string(cap::kC1) + " refs/heads/main" + '\0' +
                                  "report-status side-band-64k quiet object-format=sha1 agent=git-courier/" +
                                  COURIER_VERSION);
    CHECK(req->capabilities == std::vector<std::string>{"report-status", "side-band-64k", "quiet", "object-format=sha1",
                                                        std::string("agent=git-courier/") + COURIER_VERSION});
  }

  TEST_CASE("T4: the old id comes from the advertisement for the exact ref named") {
    auto adv = offering("report-status",
                        {{"refs/heads/main", std::string(cap::kC1)}, {"refs/heads/main2", std::string(cap::kC3)}});
    auto req = build_push_request(adv, one("refs/heads/main", cap::kC2));
    REQUIRE(req.has_value());
    CHECK(command_of(*req).substr(0, 41) == std::string(cap::kC1) + " ");
    auto other = build_push_request(adv, one("refs/heads/mai", cap::kC2));
    REQUIRE(other.has_value());
    CHECK(other->commands[0].old_oid == kZeroOid);
  }

  TEST_CASE("only capabilities the server offered are requested; agent whenever agent is offered") {
    auto bare = build_push_request(offering("report-status"), one("refs/heads/main", cap::kC1));
    REQUIRE(bare.has_value());
    CHECK(bare->capabilities == std::vector<std::string>{"report-status"});
    CHECK_FALSE(bare->side_band);
    CHECK(command_of(*bare).substr(command_of(*bare).find('\0') + 1) == "report-status");

    auto some = build_push_request(offering("agent=other/1 delete-refs report-status atomic push-options"),
                                   one("refs/heads/main", cap::kC1));
    REQUIRE(some.has_value());
    CHECK(some->capabilities ==
          std::vector<std::string>{"report-status", std::string("agent=git-courier/") + COURIER_VERSION});
  }

  TEST_CASE("T4: a server without report-status is refused, since the update could never be confirmed") {
    const auto adv = offering("side-band-64k quiet report-status-v2 agent=x");
    auto req = build_push_request(adv, one("refs/heads/main", cap::kC1));
    REQUIRE_FALSE(req.has_value());
    CHECK(req.error().code == Errc::capability_missing);
  }

  TEST_CASE("a new id that is not 40 lowercase hex is refused") {
    const auto adv = offering("report-status");
    std::string upper(cap::kC1);
    upper[0] = 'A';
    upper[1] = 'B';
    for (std::string_view bad : {std::string_view(upper), cap::kC1.substr(1), std::string_view(""),
                                 std::string_view("g52928ee173a57d4715a7e97f78ffb41edd26132")}) {
      CAPTURE(bad);
      auto req = build_push_request(adv, one("refs/heads/main", bad));
      REQUIRE_FALSE(req.has_value());
      CHECK(req.error().code == Errc::invalid_argument);
    }
  }

  TEST_CASE("ref names outside refs/ or that git would refuse are not sent") {
    const auto adv = offering("report-status");
    for (std::string_view bad : {"HEAD",
                                 "main",
                                 "refs/",
                                 "refs/heads/",
                                 ".have",
                                 "capabilities^{}",
                                 "refs/heads/a..b",
                                 "refs/heads/x.lock",
                                 "refs/heads/.hidden",
                                 "refs/heads/a b",
                                 "refs/heads//a",
                                 "refs/heads/a@{1}",
                                 "refs/heads/a.",
                                 "refs/heads/a\x01",
                                 "refs/heads/a:b",
                                 "refs/heads/a~1",
                                 "refs/heads/a^",
                                 "refs/heads/a?",
                                 "refs/heads/a*",
                                 "refs/heads/a[",
                                 "refs/heads/a\\b"}) {
      CAPTURE(bad);
      auto req = build_push_request(adv, one(bad, cap::kC1));
      REQUIRE_FALSE(req.has_value());
      CHECK(req.error().code == Errc::invalid_argument);
    }
    for (std::string_view good : {"refs/heads/main", "refs/heads/feature/x-1", "refs/tags/v1.0", "refs/courier/a.b"}) {
      CAPTURE(good);
      CHECK(build_push_request(adv, one(good, cap::kC1)).has_value());
    }
  }

  TEST_CASE("a ref already at the new id is refused: there is nothing to send") {
    auto adv = offering("report-status", {{"refs/heads/main", std::string(cap::kC1)}});
    auto req = build_push_request(adv, one("refs/heads/main", cap::kC1));
    REQUIRE_FALSE(req.has_value());
    CHECK(req.error().code == Errc::invalid_argument);
  }

  TEST_CASE(
      "T4: several refs go as one command each, the capabilities after the first, old ids from the advertisement") {
    const std::string tag_oid(40, 'c');
    auto adv = offering("report-status atomic delete-refs",
                        {{"refs/heads/main", std::string(cap::kC1)}, {"refs/heads/gone", std::string(cap::kC2)}});
    auto req =
        build_push_request(adv,
                           {RefCommand{"refs/heads/main", std::string(cap::kC2)}, RefCommand{"refs/tags/v1", tag_oid},
                            RefCommand{"refs/heads/gone", std::string(kZeroOid)}},
                           RequestOptions{false, true, {}});
    REQUIRE(req.has_value());
    CHECK(req->pack);
    CHECK(req->capabilities == std::vector<std::string>{"report-status", "atomic"});
    PktDecoder d;
    d.feed(req->body_prefix);
    std::vector<std::string> lines;
    while (true) {
      auto p = d.next();
      REQUIRE(p.has_value());
      REQUIRE(p->has_value());
      if ((*p)->kind == PktKind::flush) break;
      lines.push_back((*p)->payload);
    }
    CHECK(d.buffered() == 0);
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] ==
          std::string(cap::kC1) + " " + std::string(cap::kC2) + " refs/heads/main" + '\0' + "report-status atomic");
    CHECK(lines[1] == std::string(kZeroOid) + " " + tag_oid + " refs/tags/v1");
    CHECK(lines[2] == std::string(cap::kC2) + " " + std::string(kZeroOid) + " refs/heads/gone");
  }

  TEST_CASE("atomic and push options are asked for only when offered; never silently dropped") {
    const auto opts = RequestOptions{false, true, {"ci.skip"}};
    auto none = build_push_request(offering("report-status"), one("refs/heads/main", cap::kC1), opts);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().code == Errc::capability_missing);
    CHECK(none.error().message.find("atomic") != std::string::npos);
    CHECK_FALSE(check_requested_capabilities(offering("report-status atomic").capabilities, opts).has_value());
    auto no_options = build_push_request(offering("report-status atomic"), one("refs/heads/main", cap::kC1), opts);
    REQUIRE_FALSE(no_options.has_value());
    CHECK(no_options.error().message.find("push-options") != std::string::npos);
    auto both =
        build_push_request(offering("report-status atomic push-options"), one("refs/heads/main", cap::kC1), opts);
    REQUIRE(both.has_value());
    CHECK(both->capabilities == std::vector<std::string>{"report-status", "atomic", "push-options"});
    // The options follow the commands' flush, one packet each, then a flush.
    PktDecoder d;
    d.feed(both->body_prefix);
    std::vector<std::string> kinds;
    while (auto p = d.next()) {
      if (!p->has_value()) break;
      kinds.push_back((*p)->kind == PktKind::flush ? "flush" : (*p)->payload.substr(0, 8));
    }
    CHECK(kinds == std::vector<std::string>{"00000000", "flush", "ci.skip", "flush"});
  }

  TEST_CASE("a deletion needs delete-refs, and a request of deletions alone carries no pack") {
    auto adv = offering("report-status", {{"refs/heads/gone", std::string(cap::kC1)}});
    auto refused = build_push_request(adv, one("refs/heads/gone", kZeroOid));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == Errc::capability_missing);
    adv.capabilities = parse_capabilities("report-status delete-refs");
    auto req = build_push_request(adv, one("refs/heads/gone", kZeroOid));
    REQUIRE(req.has_value());
    CHECK_FALSE(req->pack);
    CHECK(command_of(*req) ==
          std::string(cap::kC1) + " " + std::string(kZeroOid) + " refs/heads/gone" + '\0' + "report-status");
  }

  TEST_CASE("a ref named twice in one request is refused") {
    auto req = build_push_request(offering("report-status"), {RefCommand{"refs/heads/a", std::string(cap::kC1)},
                                                              RefCommand{"refs/heads/a", std::string(cap::kC2)}});
    REQUIRE_FALSE(req.has_value());
    CHECK(req.error().code == Errc::invalid_argument);
  }
}

}  // namespace unit_transport_request
