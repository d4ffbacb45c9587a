// transport-leg.cpp — T1 T2: a leg's libcurl options are all set and
// checked before its request. An option the linked libcurl does not know, or
// a value it refuses, would otherwise be silently ignored (a refused
// CURLOPT_PROTOCOLS_STR would leave plain http allowed); instead the leg ends
// with an error naming the option, and no byte reaches the server.
#include <doctest/doctest.h>
#include <curl/curl.h>

#include <string>

#include "fixture_server.hpp"
#include "courier/result.hpp"
#include "sys/clock.hpp"
#include "transport/http_leg.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_transport_leg {

using namespace courier;

namespace {

// The advertisement GET against the fixture server's repository, trusting
// its CA, with a minute to run.
transport::LegOptions advertisement_leg(const test::FixtureServer& server) {
  transport::LegOptions o;
  o.method = "GET";
  o.url = server.url("r") + "/info/refs?service=git-receive-pack";
  o.ca_file = server.ca_file();
  o.deadline = sys::mono_after_ms(sys::mono_now_ns(), 60'000);
  o.accept = "application/x-git-receive-pack-advertisement";
  return o;
}

}  // namespace

TEST_SUITE("transport") {
  TEST_CASE("T1 T2: a libcurl option that fails ends the leg before any byte is sent, and the error names it") {
    test::FixtureServer server;
    server.create_bare_repo("r");

    // Control: the same leg with only its own options reaches the server.
    auto control = transport::perform_leg(advertisement_leg(server));
    REQUIRE_MESSAGE(control.has_value(), control.error().message);
    REQUIRE(server.count().total == 1);

    SUBCASE("an option this libcurl does not know") {
      auto leg = advertisement_leg(server);
      leg.test_extra_option = transport::LegOptions::ExtraOption{CURLOPTTYPE_LONG + 9999, 1L};
      auto r = transport::perform_leg(leg);
      CHECK_FALSE(r.has_value());
      if (!r) {
        CHECK(r.error().code == Errc::curl_refused);
        CHECK_MESSAGE(r.error().message.find("option 9999 (unknown to this libcurl)") != std::string::npos,
                      r.error().message);
      }
      CHECK_MESSAGE(server.count().total == 1, "a request was sent although an option failed");
    }
    SUBCASE("a value libcurl refuses for an option it knows") {
      auto leg = advertisement_leg(server);
      leg.test_extra_option = transport::LegOptions::ExtraOption{CURLOPT_SSLVERSION, 1000L};
      auto r = transport::perform_leg(leg);
      CHECK_FALSE(r.has_value());
      if (!r) {
        CHECK(r.error().code == Errc::curl_refused);
        CHECK_MESSAGE(r.error().message.find("CURLOPT_SSLVERSION") != std::string::npos, r.error().message);
      }
      CHECK_MESSAGE(server.count().total == 1, "a request was sent although an option failed");
    }
    // Nothing after the control: no request, and no connection either.
    const auto after = server.count();
    CHECK(after.total == 1);
    CHECK(after.connections <= 1);
    CHECK(std::string(errc_name(Errc::curl_refused)) == "curl_refused");
  }
}

}  // namespace integration_transport_leg
