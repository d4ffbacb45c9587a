// wire-url.cpp — the wire leaf's one URL parser: its own rules, and a
// differential check against libcurl's parser (CURLU), which is what the
// child's requests finally go through: whatever wire::parse_url accepts,
// libcurl accepts and reads as the same scheme, host, port, path, query and
// user.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <curl/curl.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pg/connection.hpp"
#include "state/state_url.hpp"
#include "support.hpp"
#include "wire/legs.hpp"
#include "wire/proxy.hpp"
#include "wire/remote.hpp"
#include "wire/url.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_wire_url {

using namespace courier;

namespace {

struct CurlUrlFree {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};

struct CurlReading {
  bool ok = false;
  std::string scheme, host, port, path, query, user;
};

std::string part(CURLU* u, CURLUPart which, unsigned flags = 0) {
  char* out = nullptr;
  if (curl_url_get(u, which, &out, flags) != CURLUE_OK || out == nullptr) return {};
  std::string s(out);
  curl_free(out);
  return s;
}

CurlReading curl_reads(const std::string& text) {
  std::unique_ptr<CURLU, CurlUrlFree> u(curl_url());
  CurlReading r;
  if (curl_url_set(u.get(), CURLUPART_URL, text.c_str(), CURLU_PATH_AS_IS | CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) {
    return r;
  }
  r.ok = true;
  r.scheme = part(u.get(), CURLUPART_SCHEME);
  r.host = part(u.get(), CURLUPART_HOST);
  r.port = part(u.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
  r.path = part(u.get(), CURLUPART_PATH);
  r.query = part(u.get(), CURLUPART_QUERY);
  r.user = part(u.get(), CURLUPART_USER);
  return r;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One host read alike: the same name, or for an IPv6 literal the same
// address (libcurl shortens a literal only when its own spelling is shorter;
// ours is always RFC 5952's).
bool same_host(const std::string& ours, const std::string& theirs) {
  if (ours.empty() || ours.front() != '[' || theirs.size() < 2) return ours == lower(theirs);
  in6_addr a{}, b{};
  const std::string x = ours.substr(1, ours.size() - 2), y = theirs.substr(1, theirs.size() - 2);
  return inet_pton(AF_INET6, x.c_str(), &a) == 1 && inet_pton(AF_INET6, y.c_str(), &b) == 1 &&
         std::memcmp(&a, &b, sizeof a) == 0;
}

// URLs built from pieces that each probe one rule: case, user information,
// numeric and bracketed hosts, ports, escapes, dot segments, characters
// outside RFC 3986, queries and fragments.
std::vector<std::string> generated_urls(std::size_t n) {
  const std::vector<std::string> schemes = {"https", "http", "HTTPS", "Http", "git+https", "ftp"};
  const std::vector<std::string> users = {"", "", "", "u@", "u:p@", "u%40x@", "@", "a:b:c@", "x@y@"};
  const std::vector<std::string> hosts = {"h.example",
                                          "H.Example",
                                          "127.0.0.1",
                                          "127.1",
                                          "[::1]",
                                          "[::1",
                                          "0x7f.0.0.1",
                                          "a_b.example",
                                          "",
                                          "10.0.0.256",
                                          "h.example.",
                                          "xn--caf-dma.example",
                                          "[fe80::1%25eth0]",
                                          "h%2eexample",
                                          "a!b",
                                          "[0:0:0:0:0:0:0:1]",
                                          "[0000::0001]",
                                          "[2001:DB8:0:0:1::1]",
                                          "[::ffff:127.0.0.1]",
                                          "[::1:2:3:4:5:6:7:8]"};
  const std::vector<std::string> ports = {"", "", ":", ":443", ":80", ":0", ":65536", ":08443", ":x", ":8443"};
  const std::vector<std::string> paths = {"",      "/",     "/r.git", "/team/r.git/", "/a/../b", "/%41",
                                          "/%zz",  "/%2F",  "/a|b",   "//x",          "/~u/r",   "/a:b@c",
                                          "/a\"b", "/a{b}", "/%e9",   "/sp%20ace",    "/a/./b",  "/a\\b"};
  const std::vector<std::string> queries = {"", "", "?x=1", "?service=git-receive-pack", "?a/b?c", "?%", "?a^b"};
  const std::vector<std::string> fragments = {"", "", "", "#f"};
  std::mt19937 rng(20261201);  // fixed: the same cases every run
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(pick(schemes) + "://" + pick(users) + pick(hosts) + pick(ports) + pick(paths) + pick(queries) +
                  pick(fragments));
  }
  return out;
}

}  // namespace

TEST_SUITE("wire") {
  TEST_CASE("H2 T1: whatever wire::parse_url accepts, libcurl accepts and reads alike (differential, 6000 URLs)") {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    std::size_t accepted = 0, refused_by_us_only = 0, refused_by_both = 0;
    for (const std::string& text : generated_urls(6000)) {
      CAPTURE(text);
      const auto ours = wire::parse_url(text);
      const CurlReading theirs = curl_reads(text);
      if (!ours) {
        CHECK_FALSE(ours.error().message.empty());
        (theirs.ok ? refused_by_us_only : refused_by_both)++;
        continue;
      }
      ++accepted;
      REQUIRE_MESSAGE(theirs.ok, "accepted here, refused by libcurl");
      CHECK(ours->scheme == lower(theirs.scheme));
      CHECK(same_host(ours->host, theirs.host));
      // Default ports are ours to know for http and https only (the only
      // schemes the scheme rule lets through); an explicit port must agree.
      if (wire::default_port(ours->scheme) != 0 || ours->port != 0) CHECK(std::to_string(ours->port) == theirs.port);
      CHECK(ours->path == theirs.path);
      CHECK(ours->query.value_or("") == theirs.query);
      if (ours->userinfo) CHECK(ours->userinfo->substr(0, ours->userinfo->find(':')) == theirs.user);
    }
    const std::string name = "wire::parse_url against CURLU";
    test::report(name, "accepted by both", static_cast<double>(accepted), "URLs");
    test::report(name, "refused here, accepted by libcurl", static_cast<double>(refused_by_us_only), "URLs");
    test::report(name, "refused by both", static_cast<double>(refused_by_both), "URLs");
    // The generator must reach both sides of the rules, or the check proves little.
    CHECK(accepted > 500);
    CHECK(refused_by_us_only > 100);
  }

  TEST_CASE("wire::parse_url: the default port is filled in and left out of the origin") {
    CHECK(wire::parse_url("HTTPS://H.Example/r").value().port == 443);
    CHECK(wire::parse_url("http://127.0.0.1/r").value().port == 80);
    CHECK(wire::parse_url("https://h.example:443/A/b.git/info/refs?service=X").value().without_userinfo() ==
          "https://h.example/A/b.git/info/refs?service=X");
    CHECK(wire::parse_url("https://h.example:8443/r").value().origin() == "https://h.example:8443");
    CHECK(wire::parse_url("https://[::1]:8443/r").value().origin() == "https://[::1]:8443");
    CHECK(wire::parse_url("https://u:p@h.example/r").value().userinfo.value() == "u:p");
    CHECK(wire::parse_url("https://u:p@h.example/r").value().without_userinfo() == "https://h.example/r");
    CHECK_FALSE(wire::parse_url("https://h.example/r").value().userinfo.has_value());
  }

  TEST_CASE("wire::parse_url refuses what two programs could read differently") {
    for (const char* bad :
         {"https://h.example/r#frag", "https://h.example/r?a b", "https://127.1/r", "https://0x7f.0.0.1/r",
          "https://h%2eexample/r", "https://h.example/a|b", "https://h.example/%zz", "https://x@y@h.example/r",
          "https://h.example/\xc3\xa9", "https://[fe80::1%25eth0]/r", "https://h.example:65536/r", "h.example/r"}) {
      CAPTURE(bad);
      auto r = wire::parse_url(bad);
      REQUIRE_FALSE(r);
      CHECK(r.error().code == Errc::invalid_argument);
      CHECK(r.error().message.find("malformed URL") == 0);
    }
  }

  TEST_CASE("wire::parse_url: an error message never repeats user information") {
    auto r = wire::parse_url("https://alice:S3cretPW@h.example:bad/r");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("S3cretPW") == std::string::npos);
    CHECK(r.error().message.find("alice") == std::string::npos);
  }

  TEST_CASE("H2: an IP literal has one spelling: IPv6 in RFC 5952 form, IPv4 as a plain dotted quad") {
    for (const char* host : {"[::1]", "[0::1]", "[0:0:0:0:0:0:0:1]", "[::0:1]", "[0000::0001]", "[0:0::0:1]"}) {
      CAPTURE(host);
      auto u = wire::parse_url(std::string("https://") + host + ":8443/r.git");
      REQUIRE_MESSAGE(u.has_value(), u.error().message);
      CHECK(u->host == "[::1]");
      CHECK(u->origin() == "https://[::1]:8443");
    }
    CHECK(wire::parse_url("https://[2001:DB8:0:0:1:0:0:1]/r").value().host == "[2001:db8::1:0:0:1]");
    CHECK(wire::parse_url("https://[2001:db8:0:0:0:0:2:1]/r").value().host == "[2001:db8::2:1]");
    CHECK(wire::parse_url("http://[0:0::1]/r").value().loopback());
    // The IPv4-mapped spelling of an IPv4 address is refused with the one to use.
    auto mapped = wire::parse_url("https://[::ffff:127.0.0.1]/r");
    REQUIRE_FALSE(mapped.has_value());
    CHECK_MESSAGE(mapped.error().message.find("write it as 127.0.0.1") != std::string::npos, mapped.error().message);
    for (const char* bad : {"https://[1:2:3:4:5:6:7:8:9]/r", "https://[::1::2]/r", "https://[12345::1]/r",
                            "https://127.000.0.1/r", "https://0177.0.0.1/r", "https://2130706433/r"}) {
      CAPTURE(bad);
      CHECK_FALSE(wire::parse_url(bad).has_value());
    }
  }

  TEST_CASE(
      "H2: a password holding '/', '?', '#' or '@' is in no message or redaction of a remote, a proxy or a state "
      "URL") {
    // Each password is "Zq9" + a character parsers end the authority at + "Xw7";
    // neither half may show anywhere.
    for (const std::string mid : {"/", "?", "#", "@", "/a?b#", ":"}) {
      const std::string pw = "Zq9" + mid + "Xw7";
      const auto hidden = [&](const std::string& text) {
        CAPTURE(text);
        CHECK(text.find("Zq9") == std::string::npos);
        CHECK(text.find("Xw7") == std::string::npos);
      };
      for (const std::string& url : {"https://alice:" + pw + "@127.0.0.1:8443/r.git", "https://" + pw + "@h/r.git",
                                     "https://alice:" + pw + "@h:bad/r"}) {
        CAPTURE(url);
        hidden(wire::redact_url(url));
        if (url.find("alice:") != std::string::npos) hidden(wire::redact_url(url, wire::Redact::password));
        CHECK(wire::carries_password(url) == (url.find("alice:") != std::string::npos || mid == ":"));
        if (auto u = wire::parse_url(url); !u) hidden(u.error().message);
        auto r = wire::parse_remote(url);
        REQUIRE_FALSE(r.has_value());
        hidden(r.error().message);
        if (auto p = wire::parse_proxy("http://alice:" + pw + "@127.0.0.1:3128/x"); !p) hidden(p.error().message);
      }
      const std::string state = "postgres://courier:" + pw + "@db.example:5432/courier?sslmode=require";
      CAPTURE(state);
      hidden(pg::redact_conninfo(state));
      auto u = state::parse_state_url(state);
      if (u) {
        hidden(u->redacted);
        CHECK(u->redacted.find("courier:***@") != std::string::npos);
      } else {
        hidden(u.error().message);
      }
      hidden(pg::redact_conninfo("postgres://db.example/courier?password=" + pw + "&sslmode=require"));
      CHECK(wire::carries_password(state));
    }
    // A user name is kept in a state URL (it says who connects), hidden in a remote.
    CHECK(pg::redact_conninfo("postgres://courier:pw@db/c") == "postgres://courier:***@db/c");
    CHECK(wire::redact_url("https://tok@h/r.git") == "https://***@h/r.git");
    CHECK_FALSE(wire::carries_password("postgres://courier@db/c"));
  }

  TEST_CASE("wire::Url::loopback: 127.0.0.0/8 as a dotted quad and [::1], nothing else") {
    CHECK(wire::parse_url("http://127.0.0.1/r").value().loopback());
    CHECK(wire::parse_url("http://127.200.3.4:9/r").value().loopback());
    CHECK(wire::parse_url("http://[::1]/r").value().loopback());
    CHECK_FALSE(wire::parse_url("http://localhost/r").value().loopback());
    CHECK_FALSE(wire::parse_url("http://127.0.0.1.example/r").value().loopback());
    CHECK_FALSE(wire::parse_url("http://128.0.0.1/r").value().loopback());
  }

  TEST_CASE("T1: the scheme rule allows https, and plain http only to loopback when asked") {
    auto scheme = [](const char* url, bool allow) { return wire::check_scheme(wire::parse_url(url).value(), allow); };
    CHECK(scheme("https://h.example/r", false));
    CHECK(scheme("http://127.0.0.1/r", true));
    CHECK(scheme("http://127.0.0.1/r", false).error().code == Errc::scheme_refused);
    CHECK(scheme("http://h.example/r", true).error().code == Errc::scheme_refused);
    CHECK(scheme("ftp://h.example/r", true).error().code == Errc::scheme_refused);
  }

  TEST_CASE("A2: the two legs come from one table; their URLs drop the remote's trailing slashes") {
    CHECK(wire::leg_url("https://h/r.git//", wire::Leg::advertisement) ==
          "https://h/r.git/info/refs?service=git-receive-pack");
    CHECK(wire::leg_url("https://h/r.git", wire::Leg::receive_pack) == "https://h/r.git/git-receive-pack");
    REQUIRE(wire::find_leg("receive-pack") != nullptr);
    CHECK(wire::find_leg("receive-pack")->method == "POST");
    CHECK(wire::find_leg("advertisement")->method == "GET");
    CHECK(wire::find_leg("upload-pack") == nullptr);
  }
}

}  // namespace unit_wire_url
