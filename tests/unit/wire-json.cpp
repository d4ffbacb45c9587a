// wire-json.cpp — the one bounded JSON reader (src/wire/json.hpp):
// every JSON text the product reads — frames, API bodies, journal rows, the
// verifier's fence state, the service's answers — is read through it. The
// rule is P1's (a malformed or oversized message is refused whole), made
// one for every JSON the product reads, so the tests carry its id.
#include <doctest/doctest.h>

#include <string>

#include "wire/json.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_wire_json {

using namespace courier;

namespace {

// Arrays nested `depth` deep around one 1.
std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

// Objects nested `depth` deep: {"a":{"a":...{}...}}.
std::string nested_objects(std::size_t depth) {
  std::string text;
  for (std::size_t i = 1; i < depth; ++i) text += "{\"a\":";
  return text + "{}" + std::string(depth - 1, '}');
}

Errc error_of(const std::string& text) {
  auto r = wire::parse_json(text, "the text");
  REQUIRE_FALSE_MESSAGE(r.has_value(), "accepted: " << text.substr(0, 80));
  return r.error().code;
}

}  // namespace

TEST_SUITE("wire-json") {
  TEST_CASE("P1: JSON nested up to kMaxJsonDepth is read; one level deeper, or 100,000 deep, is refused, not built") {
    auto at_cap = wire::parse_json(nested_arrays(wire::kMaxJsonDepth), "the text");
    REQUIRE_MESSAGE(at_cap.has_value(), at_cap.error().message);
    CHECK(wire::json_depth(*at_cap) == wire::kMaxJsonDepth);
    CHECK(wire::parse_json(nested_objects(wire::kMaxJsonDepth), "the text").has_value());
    CHECK(error_of(nested_arrays(wire::kMaxJsonDepth + 1)) == Errc::json_too_deep);
    CHECK(error_of(nested_objects(wire::kMaxJsonDepth + 1)) == Errc::json_too_deep);
    // The attack's shape: a detail nested 100,000 deep, inside an object.
    auto deep = wire::parse_json("{\"detail\":" + nested_arrays(100'000) + "}", "the entry's detail");
    REQUIRE_FALSE(deep.has_value());
    CHECK(deep.error().code == Errc::json_too_deep);
    CHECK_MESSAGE(deep.error().message == "the entry's detail nests arrays and objects deeper than 64 levels",
                  deep.error().message);
    // Unterminated nesting is still refused for its depth (it is never built).
    CHECK(error_of(std::string(200'000, '[')) == Errc::json_too_deep);
  }

  TEST_CASE("P1: JSON text of kMaxJsonBytes is read; one byte more is refused before it is parsed") {
    const std::string at_cap = "\"" + std::string(wire::kMaxJsonBytes - 2, 'x') + "\"";
    auto ok = wire::parse_json(at_cap, "the text");
    REQUIRE_MESSAGE(ok.has_value(), ok.error().message);
    CHECK(ok->get_ref<const std::string&>().size() == wire::kMaxJsonBytes - 2);
    auto over = wire::parse_json(at_cap + " ", "fence state /f");
    REQUIRE_FALSE(over.has_value());
    CHECK(over.error().code == Errc::json_too_large);
    CHECK_MESSAGE(over.error().message.find("fence state /f is 1048577 bytes") == 0, over.error().message);
  }

  TEST_CASE("P1: a key twice in one object, at any depth, is refused; the same key in sibling objects is not") {
    auto twice = wire::parse_json(R"({"repo":"/srv/r","repo":"/etc"})", "the body");
    REQUIRE_FALSE(twice.has_value());
    CHECK(twice.error().code == Errc::duplicate_key);
    CHECK_MESSAGE(twice.error().message == "the body has the key 'repo' twice in one object", twice.error().message);
    CHECK(error_of(R"({"r":7,"r":2})") == Errc::duplicate_key);
    CHECK(error_of(R"({"a":[{"k":1,"k":1}]})") == Errc::duplicate_key);
    CHECK(error_of(R"([{"x":{"k":1,"k":2}}])") == Errc::duplicate_key);
    CHECK(wire::parse_json(R"({"a":[{"k":1},{"k":2}],"k":{"k":3}})", "the text").has_value());
    // A hostile key is shown escaped and cut.
    const std::string key = "\\u001b[2J" + std::string(10'000, 'k');
    auto shown = wire::parse_json("{\"" + key + "\":1,\"" + key + "\":2}", "the text");
    REQUIRE_FALSE(shown.has_value());
    CHECK(shown.error().message.find('\x1b') == std::string::npos);
    CHECK(shown.error().message.size() < 200);
  }

  TEST_CASE("P1: what is not one JSON value is malformed_json, and no exception leaves the reader") {
    for (const std::string text : {"", "{", "[1,]", "{\"a\":1} x", "nul", "\"\xff\"", "{\"a\":1,}", "1 2"}) {
      CAPTURE(text);
      CHECK(error_of(text) == Errc::malformed_json);
    }
    auto ok = wire::parse_json(R"( {"a": [1, 2.5, -3, true, null, "s"]} )", "the text");
    REQUIRE(ok.has_value());
    CHECK((*ok)["a"].size() == 6);
  }
}

}  // namespace unit_wire_json
