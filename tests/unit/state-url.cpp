// state-url.cpp — the one parser of `--state` (src/state/state_url.hpp):
// which spellings name which backend, what is refused and why, and that a
// password never reaches a message. Process-free.
#include <doctest/doctest.h>

#include <string>

#include "state/state_url.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_state_url {

using namespace courier;
using state::StateUrl;

TEST_SUITE("state-url") {
  TEST_CASE("state URL: sqlite:PATH names the SQLite journal at an absolute or relative path") {
    auto abs = state::parse_state_url("sqlite:/var/lib/courier/journal.db");
    REQUIRE(abs.has_value());
    CHECK(abs->kind == StateUrl::Kind::sqlite);
    CHECK(abs->path == "/var/lib/courier/journal.db");
    auto rel = state::parse_state_url("sqlite:state/journal.db");
    REQUIRE(rel.has_value());
    CHECK(rel->path == "state/journal.db");
    CHECK(rel->redacted == "sqlite:state/journal.db");
  }

  TEST_CASE("state URL: postgres:// and postgresql:// are handed to libpq as written") {
    for (const std::string text : {"postgres://courier@db.example:5433/courier?sslmode=verify-full",
                                   "postgresql://db.example/courier", "postgresql:///courier?host=/run/postgresql"}) {
      CAPTURE(text);
      auto u = state::parse_state_url(text);
      REQUIRE_MESSAGE(u.has_value(), (u ? std::string() : u.error().message));
      CHECK(u->kind == StateUrl::Kind::postgres);
      CHECK(u->conninfo == text);
      CHECK(u->redacted == text);
    }
  }

  TEST_CASE("H2: a password in the state URL reaches libpq and never a message") {
    auto u = state::parse_state_url("postgres://courier:s3cret@db.example/courier?password=s3cret2&sslmode=require");
    REQUIRE(u.has_value());
    CHECK(u->conninfo.find("s3cret") != std::string::npos);
    CHECK(u->redacted.find("s3cret") == std::string::npos);
    CHECK(u->redacted.find("db.example/courier") != std::string::npos);
    CHECK(u->redacted.find("sslmode=require") != std::string::npos);
    auto bad = state::parse_state_url("postgres://courier:s3cret@db example/courier");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message.find("s3cret") == std::string::npos);
  }

  TEST_CASE("state URL: a bare path is refused with the sqlite: spelling suggested") {
    auto u = state::parse_state_url("/var/lib/courier/journal.db");
    REQUIRE_FALSE(u.has_value());
    CHECK(u.error().code == Errc::invalid_argument);
    CHECK(u.error().message.find("sqlite:/var/lib/courier/journal.db") != std::string::npos);
  }

  TEST_CASE(
      "state URL: an unknown scheme, an empty text, an empty sqlite: path and a URL naming no database are refused") {
    for (const std::string text :
         {"mysql://db/courier", "", "sqlite:", "postgres://db.example", "postgres://", "redis:6379"}) {
      CAPTURE(text);
      auto u = state::parse_state_url(text);
      REQUIRE_FALSE(u.has_value());
      CHECK(u.error().code == Errc::invalid_argument);
      CHECK(u.error().message.rfind("--state", 0) == 0);
    }
  }
}

}  // namespace unit_state_url
