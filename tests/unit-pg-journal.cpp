// unit-pg-journal.cpp — the PostgreSQL state backend against a real server
// (a throwaway PostgreSQL 15, tests/pg_support.hpp): the connection's bounds,
// the schema's migrations, and the journal's contract (journal.hpp) as the
// SQLite journal keeps it.
#include <doctest/doctest.h>

#include <string>

#include "pg/connection.hpp"
#include "pg_support.hpp"
#include "support.hpp"
#include "sys/clock.hpp"

using namespace courier;

namespace {

// The cluster, or a skip with the reason when PostgreSQL is not installed.
#define PG_CLUSTER_OR_SKIP(name)                   \
  std::string pg_missing_;                         \
  if (!test::PgCluster::available(&pg_missing_)) { \
    MESSAGE("skipped: " << pg_missing_);           \
    return;                                        \
  }                                                \
  test::PgCluster name = test::PgCluster::start()

sys::MonoNs within_ms(std::int64_t ms) { return sys::mono_after_ms(sys::mono_now_ns(), ms); }

pg::Connection connect(const std::string& url, const std::string& app = "git-courier/test/1") {
  auto c = pg::Connection::open(pg::ConnectOptions{url, app}, within_ms(5000));
  REQUIRE_MESSAGE(c.has_value(), (c ? std::string() : c.error().message));
  return std::move(*c);
}

}  // namespace

TEST_SUITE("pg-journal") {
  TEST_CASE("database: a connection runs a statement with parameters and reads NULL as no value") {
    PG_CLUSTER_OR_SKIP(db);
    pg::Connection c = connect(db.url());
    auto rows = c.exec("SELECT $1::text || 'b', NULL::text", {std::string("a")}, within_ms(5000));
    REQUIRE(rows.has_value());
    REQUIRE(rows->rows.size() == 1);
    CHECK(rows->rows[0][0] == std::optional<std::string>("ab"));
    CHECK_FALSE(rows->rows[0][1].has_value());
    // Over the Unix socket too.
    pg::Connection s = connect(db.socket_url());
    CHECK(s.exec("SELECT 1", {}, within_ms(5000)).has_value());
  }

  TEST_CASE("database: migration creates the schema once, and again is a no-op") {
    PG_CLUSTER_OR_SKIP(db);
    pg::Connection c = connect(db.url());
    REQUIRE(pg::migrate(c, within_ms(10000)).has_value());
    REQUIRE(pg::migrate(c, within_ms(10000)).has_value());
    CHECK(db.sql("SELECT count(*) FROM courier_schema_version") == "1");
    CHECK(db.sql("SELECT max(version) FROM courier_schema_version") == std::to_string(pg::schema_version()));
    CHECK(db.sql("SELECT count(*) FROM information_schema.tables WHERE table_name IN ('courier_lease',"
                 " 'courier_instance', 'courier_delivery', 'courier_entry')") == "4");
  }
}
