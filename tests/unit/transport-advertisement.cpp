// transport-advertisement.cpp — the receive-pack ref advertisement:
// real git http-backend output, and every way a body can be wrong.
#include <doctest/doctest.h>

#include <cctype>
#include <string>

#include "data/transport/captures.hpp"
#include "transport/advertisement.hpp"
#include "transport/oid.hpp"
#include "transport/pktline.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_transport_advertisement {

using namespace courier;
using namespace courier::transport;
namespace cap = courier::test::captures;

namespace {

std::string pkt(std::string_view payload) { return *encode_pkt(payload); }

const std::string kService = pkt("# service=git-receive-pack\n") + "0000";
const std::string kCaps = "report-status side-band-64k quiet object-format=sha1 agent=git/2.39.5";

std::string first_line(std::string_view oid, std::string_view name, std::string_view caps = kCaps) {
  return pkt(std::string(oid) + " " + std::string(name) + '\0' + std::string(caps) + "\n");
}

Errc code_of(std::string_view body) {
  auto adv = parse_advertisement(body);
  REQUIRE_FALSE(adv.has_value());
  return adv.error().code;
}

}  // namespace

TEST_SUITE("transport") {
  TEST_CASE("a real empty-repository advertisement has no refs and carries its capabilities") {
    auto adv = parse_advertisement(cap::kAdvEmpty);
    REQUIRE(adv.has_value());
    CHECK(adv->refs.empty());
    CHECK(adv->haves.empty());
    const Capabilities& caps = adv->capabilities;
    CHECK(caps.has("report-status"));
    CHECK(caps.has("side-band-64k"));
    CHECK(caps.has("quiet"));
    CHECK(caps.has("object-format"));
    CHECK(caps.value("object-format") == std::optional<std::string_view>("sha1"));
    CHECK("agent=" + std::string(*caps.value("agent")) == cap::kServerAgent);
    CHECK(caps.tokens.count("report-status-v2") == 1);
    CHECK_FALSE(caps.has("push-options"));
    CHECK_FALSE(caps.value("report-status").has_value());
    CHECK(adv->oid_of("refs/heads/main") == kZeroOid);
  }

  TEST_CASE("a real non-empty advertisement maps every ref to its id") {
    auto adv = parse_advertisement(cap::kAdvNonEmpty);
    REQUIRE(adv.has_value());
    CHECK(adv->refs.size() == 3);
    CHECK(adv->oid_of("refs/heads/main") == cap::kC1);
    CHECK(adv->oid_of("refs/heads/side") == cap::kC3);
    CHECK(adv->oid_of("refs/tags/v1") == cap::kC1);
    CHECK(adv->oid_of("refs/heads/other") == kZeroOid);
    CHECK(adv->haves.empty());
    CHECK(adv->capabilities.has("report-status"));
  }

  TEST_CASE(".have lines from a real server are collected apart from refs, with or without real refs") {
    auto only_have = parse_advertisement(cap::kAdvHave);
    REQUIRE(only_have.has_value());
    CHECK(only_have->refs.empty());
    CHECK(only_have->haves == std::vector<std::string>{std::string(cap::kC2)});
    CHECK(only_have->capabilities.has("report-status"));

    auto both = parse_advertisement(cap::kAdvRefAndHave);
    REQUIRE(both.has_value());
    CHECK(both->refs.size() == 1);
    CHECK(both->oid_of("refs/heads/main") == cap::kC1);
    CHECK(both->oid_of(".have") == kZeroOid);
    CHECK(both->haves == std::vector<std::string>{std::string(cap::kC2)});
  }

  TEST_CASE("a real sha256 repository is refused as an unsupported object format") {
    auto adv = parse_advertisement(cap::kAdvSha256);
    REQUIRE_FALSE(adv.has_value());
    CHECK(adv.error().code == Errc::unsupported_object_format);
    CHECK(adv.error().message.find("unsupported object format") != std::string::npos);
    CHECK(adv.error().message.find("sha256") != std::string::npos);
    CHECK(std::string(errc_name(Errc::unsupported_object_format)) == "unsupported_object_format");
  }

  TEST_CASE("any object-format other than sha1 is refused, even with 40-digit ids") {
    const std::string body =
        kService + first_line(cap::kC1, "refs/heads/main", "report-status object-format=sha999") + "0000";
    CHECK(code_of(body) == Errc::unsupported_object_format);
  }

  TEST_CASE("a server that does not mention object-format is taken to be sha1") {
    auto adv = parse_advertisement(kService + first_line(cap::kC1, "refs/heads/main", "report-status") + "0000");
    REQUIRE(adv.has_value());
    CHECK(adv->oid_of("refs/heads/main") == cap::kC1);
  }

  TEST_CASE("an advertisement without its final flush is refused, whether cut cleanly or mid-packet") {
    const std::string_view adv = cap::kAdvNonEmpty;
    CHECK(code_of(adv.substr(0, adv.size() - 4)) == Errc::advertisement_malformed);
    CHECK(code_of(adv.substr(0, adv.size() - 10)) == Errc::pkt_truncated);
    for (std::size_t n = 0; n < adv.size(); ++n) {
      CAPTURE(n);
      CHECK_FALSE(parse_advertisement(adv.substr(0, n)).has_value());
    }
  }

  TEST_CASE("bytes after the final flush are refused") {
    CHECK(code_of(std::string(cap::kAdvNonEmpty) + "0000") == Errc::advertisement_malformed);
    CHECK(code_of(std::string(cap::kAdvNonEmpty) + "x") == Errc::advertisement_malformed);
  }

  TEST_CASE("the first packet must be the receive-pack service line followed by a flush") {
    CHECK(code_of(pkt("# service=git-upload-pack\n") + "0000" + first_line(kZeroOid, "capabilities^{}") + "0000") ==
          Errc::advertisement_malformed);
    CHECK(code_of(pkt("# service=git-receive-pack\n") + first_line(kZeroOid, "capabilities^{}") + "0000") ==
          Errc::advertisement_malformed);
    CHECK(code_of("") == Errc::advertisement_malformed);
    // A dumb-HTTP info/refs body or an HTML page is not pkt-lines at all.
    CHECK_FALSE(parse_advertisement(std::string(cap::kC1) + "\trefs/heads/main\n").has_value());
    CHECK(code_of("<html><body>Sign in</body></html>\n") == Errc::pkt_invalid_length);
    // Without the trailing LF the service line means the same.
    auto adv = parse_advertisement(pkt("# service=git-receive-pack") + "0000" +
                                   first_line(kZeroOid, "capabilities^{}") + "0000");
    CHECK(adv.has_value());
  }

  TEST_CASE("capabilities are accepted on the first ref line only") {
    const std::string body =
        kService + first_line(cap::kC1, "refs/heads/main") + first_line(cap::kC2, "refs/heads/other") + "0000";
    CHECK(code_of(body) == Errc::advertisement_malformed);
  }

  TEST_CASE("ids must be 40 lowercase hex digits and not the zero id for a real ref") {
    std::string upper(cap::kC1);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK(code_of(kService + first_line(upper, "refs/heads/main") + "0000") == Errc::advertisement_malformed);
    CHECK(code_of(kService + first_line(cap::kC1.substr(1), "refs/heads/main") + "0000") ==
          Errc::advertisement_malformed);
    CHECK(code_of(kService + first_line(kZeroOid, "refs/heads/main") + "0000") == Errc::advertisement_malformed);
    CHECK(code_of(kService + first_line(cap::kC1, "") + "0000") == Errc::advertisement_malformed);
    CHECK(code_of(kService + pkt(std::string(cap::kC1) + "\n") + "0000") == Errc::advertisement_malformed);
  }

  TEST_CASE("capabilities^{} is valid only alone, first, and with the zero id") {
    CHECK(code_of(kService + first_line(cap::kC1, "capabilities^{}") + "0000") == Errc::advertisement_malformed);
    CHECK(code_of(kService + first_line(kZeroOid, "capabilities^{}") + pkt(std::string(cap::kC1) + " refs/heads/x\n") +
                  "0000") == Errc::advertisement_malformed);
    CHECK(code_of(kService + first_line(cap::kC1, "refs/heads/x") + pkt(std::string(kZeroOid) + " capabilities^{}\n") +
                  "0000") == Errc::advertisement_malformed);
  }

  TEST_CASE("a ref advertised twice is refused") {
    const std::string again = pkt(std::string(cap::kC2) + " refs/heads/main\n");
    const std::string body = kService + first_line(cap::kC1, "refs/heads/main") + again + "0000";
    CHECK(code_of(body) == Errc::advertisement_malformed);
  }

  TEST_CASE("delim and response-end packets have no place in a v0 advertisement") {
    CHECK(code_of(kService + first_line(cap::kC1, "refs/heads/main") + "0001" + "0000") ==
          Errc::advertisement_malformed);
    CHECK(code_of(kService + first_line(cap::kC1, "refs/heads/main") + "0002") == Errc::advertisement_malformed);
  }

  TEST_CASE("an ERR packet from the server becomes a remote error carrying its message, escaped") {
    auto adv = parse_advertisement(pkt("ERR access denied\x1b[2J\n"));
    REQUIRE_FALSE(adv.has_value());
    CHECK(adv.error().code == Errc::remote_error);
    CHECK(adv.error().message.find("access denied\\x1b[2J") != std::string::npos);
    CHECK(code_of(kService + pkt("ERR no such repository\n")) == Errc::remote_error);
  }

  TEST_CASE("the advertisement Content-Type must be the receive-pack advertisement, parameters tolerated") {
    CHECK(check_advertisement_content_type(cap::kAdvertisementContentType).has_value());
    CHECK(check_advertisement_content_type("application/x-git-receive-pack-advertisement; charset=utf-8").has_value());
    CHECK(check_advertisement_content_type("application/x-git-receive-pack-advertisement;q=1").has_value());
    CHECK(check_advertisement_content_type("Application/X-Git-Receive-Pack-Advertisement").has_value());
    for (std::string_view bad :
         {"", "text/plain", "text/html; charset=utf-8", "application/x-git-upload-pack-advertisement",
          "application/x-git-receive-pack-advertisementX", "application/x-git-receive-pack-result"}) {
      CAPTURE(bad);
      auto r = check_advertisement_content_type(bad);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == Errc::bad_content_type);
    }
  }
}

}  // namespace unit_transport_advertisement
