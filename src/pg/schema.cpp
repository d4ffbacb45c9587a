// schema.cpp — the PostgreSQL schema as data (a table of migrations) and
// migrate(), which creates it or brings it up to date (connection.hpp).
//
// The rule (docs/design.md "The state backend"): a migration, once shipped,
// is never edited; a change is a new entry at the end with the next version.
// The program migrates on start, never an operator by hand. Each migration
// runs in its own transaction holding a transaction-scoped advisory lock, so
// that two hosts starting at once apply it once: the second waits for the
// first's commit, then reads the version and finds nothing left to do.
#include <array>
#include <cstdint>
#include <string>

#include "pg/connection.hpp"

namespace courier::pg {

namespace {

struct Migration {
  int version;
  const char* sql;
};

// The advisory lock's key: a constant of this program's (advisory locks are
// per database, and only git-courier's migrations take this one).
constexpr const char* kMigrationLock = "31088473603745138";

// Version 1: the journal (deliveries and their append-only entries, as in
// the SQLite journal, plus the submitting host) and the lanes' leases.
constexpr const char* kVersion1 = R"sql(
CREATE TABLE courier_delivery (
  id text PRIMARY KEY,
  attempt integer NOT NULL,
  repo text NOT NULL,
  remote text NOT NULL,
  lane text NOT NULL,
  ref text NOT NULL,
  oid text NOT NULL,
  expect_old text,
  deadline_unix_ms bigint NOT NULL,
  submitter_pid bigint NOT NULL,
  submitter_start_ticks bigint NOT NULL,
  submitter_boot_id text NOT NULL,
  host text NOT NULL DEFAULT '',
  submitted_unix_ms bigint NOT NULL,
  finished boolean NOT NULL DEFAULT false,
  outcome text,
  outcome_kind text);
CREATE TABLE courier_entry (
  seq bigserial PRIMARY KEY,
  id text NOT NULL REFERENCES courier_delivery (id),
  attempt integer NOT NULL,
  step text NOT NULL,
  at_unix_ms bigint NOT NULL,
  detail text NOT NULL);
CREATE INDEX courier_entry_by_id ON courier_entry (id, seq);
CREATE INDEX courier_delivery_by_submitted ON courier_delivery (submitted_unix_ms);
CREATE SEQUENCE courier_fence;
CREATE TABLE courier_lease (
  lane text PRIMARY KEY,
  fence bigint NOT NULL,
  host text NOT NULL,
  instance text NOT NULL,
  delivery text NOT NULL,
  expires_at timestamptz NOT NULL,
  released boolean NOT NULL DEFAULT false);
CREATE TABLE courier_instance (
  instance text PRIMARY KEY,
  host text NOT NULL,
  pid bigint NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  alive_until timestamptz NOT NULL);
)sql";

// Version 2: a lease names the margin its holder kills by, so a host (or a
// recovery) configured with a shorter one still waits the holder's out
// (L3: the takeable instant is the expiry plus the larger margin).
constexpr const char* kVersion2 = R"sql(
ALTER TABLE courier_lease ADD COLUMN margin_ms bigint NOT NULL DEFAULT 0;
)sql";

// Version 3: a delivery carries the set of ref updates it was submitted
// with (journal::request_detail; J4's identity). Rows written before read
// as their one update (ref, oid, expect_old): null here.
constexpr const char* kVersion3 = R"sql(
ALTER TABLE courier_delivery ADD COLUMN request text;
)sql";

constexpr std::array<Migration, 3> kMigrations = {{{1, kVersion1}, {2, kVersion2}, {3, kVersion3}}};

// Reads the version under the lock; 0 for a database without our schema.
Result<int> current_version(Connection& c, sys::MonoNs until) {
  if (auto made = c.exec_script("CREATE TABLE IF NOT EXISTS courier_schema_version (version integer NOT NULL)", until);
      !made) {
    return tl::unexpected(made.error());
  }
  auto rows = c.exec("SELECT coalesce(max(version), 0) FROM courier_schema_version", {}, until);
  if (!rows) return tl::unexpected(rows.error());
  if (rows->rows.size() != 1 || !rows->rows[0][0]) return 0;
  return std::stoi(*rows->rows[0][0]);
}

// One migration in one transaction: applied unless the version already has it.
Result<void> apply(Connection& c, const Migration& m, sys::MonoNs until) {
  if (auto begun = c.exec_script("BEGIN", until); !begun) return begun;
  auto body = [&]() -> Result<void> {
    if (auto locked = c.exec("SELECT pg_advisory_xact_lock($1::bigint)", {kMigrationLock}, until); !locked) {
      return tl::unexpected(locked.error());
    }
    auto version = current_version(c, until);
    if (!version) return tl::unexpected(version.error());
    if (*version > schema_version()) {
      return fail(Errc::invalid_argument, "PostgreSQL " + c.redacted() + ": the schema is at version " +
                                              std::to_string(*version) + ", newer than this program knows (" +
                                              std::to_string(schema_version()) + "): upgrade git-courier");
    }
    if (*version >= m.version) return {};
    if (auto ddl = c.exec_script(m.sql, until); !ddl) return ddl;
    auto recorded =
        c.exec("INSERT INTO courier_schema_version (version) VALUES ($1::integer)", {std::to_string(m.version)}, until);
    if (!recorded) return tl::unexpected(recorded.error());
    return {};
  };
  auto r = body();
  if (r) r = c.exec_script("COMMIT", until);
  if (!r && !c.broken()) (void)c.exec_script("ROLLBACK", until);
  return r;
}

}  // namespace

int schema_version() { return kMigrations.back().version; }

Result<void> migrate(Connection& c, sys::MonoNs until) {
  for (const Migration& m : kMigrations) {
    if (auto applied = apply(c, m, until); !applied) return applied;
  }
  return {};
}

}  // namespace courier::pg
