// pg-journal.cpp — the PostgreSQL state backend against a real server
// (a throwaway PostgreSQL 15, tests/support/pg_support.hpp): the connection's bounds,
// the schema's migrations, a server crash, and two hosts submitting one id at
// once. The journal's contract (journal.hpp), which the SQLite journal keeps
// too, is proven once for both in integration/journal-contract.cpp.
#include <doctest/doctest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "journal/journal.hpp"
#include "journal_fixtures.hpp"
#include "pg/connection.hpp"
#include "pg_support.hpp"
#include "service_support.hpp"
#include "support.hpp"
#include "sys/clock.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_pg_journal {

using namespace courier;
using namespace courier::journal;

namespace {

sys::MonoNs within_ms(std::int64_t ms) { return sys::mono_after_ms(sys::mono_now_ns(), ms); }

pg::Connection connect(const std::string& url, const std::string& app = "git-courier/test/1") {
  auto c = pg::Connection::open(pg::ConnectOptions{url, app}, within_ms(5000));
  REQUIRE_MESSAGE(c.has_value(), (c ? std::string() : c.error().message));
  return std::move(*c);
}

std::unique_ptr<Journal> open_pg(const std::string& url, const std::string& app = "git-courier/test/1") {
  auto u = state::parse_state_url(url);
  REQUIRE_MESSAGE(u.has_value(), (u ? std::string() : u.error().message));
  auto j = open_state(*u, app);
  REQUIRE_MESSAGE(j.has_value(), (j ? std::string() : j.error().message));
  return std::move(*j);
}

using test::journal_entry;
using test::journal_submission;

Submission submission(const std::string& id, int attempt = 1) { return journal_submission(id, attempt); }

Entry entry(Step step, int attempt = 1, const std::string& detail = "{}") {
  return journal_entry(step, attempt, detail);
}

void require_ok(const Result<void>& r) { REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.error().message)); }

// What the session named `app` waits for, as pg_locks shows it: "<table>
// <mode>", or "transactionid ShareLock" for a row another transaction
// wrote and has not ended yet; "" while it waits for no lock.
std::string waits_for(pg::Connection& watch, const std::string& app) {
  auto q = watch.exec(
      "SELECT coalesce(l.relation::regclass::text, l.locktype) || ' ' || l.mode FROM pg_locks l"
      " JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.application_name = $1",
      {app}, within_ms(5000));
  if (!q) return "(pg_locks unreadable: " + q.error().message + ")";
  return q->rows.empty() ? std::string() : q->rows[0][0].value_or("");
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
    CHECK(db.sql("SELECT count(*) FROM courier_schema_version") == std::to_string(pg::schema_version()));
    CHECK(db.sql("SELECT max(version) FROM courier_schema_version") == std::to_string(pg::schema_version()));
    CHECK(db.sql("SELECT count(*) FROM information_schema.tables WHERE table_name IN ('courier_lease',"
                 " 'courier_instance', 'courier_delivery', 'courier_entry')") == "4");
  }

  TEST_CASE("J1: a submission is durable when submit returns: a server crash right after does not lose it") {
    PG_CLUSTER_OR_SKIP(db);
    {
      auto j = open_pg(db.url());
      require_ok(j->submit(submission("d-1"), 1000));
      require_ok(j->append("d-1", entry(Step::claimed), false));
      // The server's processes quit at once, as in a crash: only what reached its WAL's disk comes back.
      db.stop("immediate");
    }
    db.restart();
    auto j = open_pg(db.url());
    auto r = j->find("d-1");
    REQUIRE(r.has_value());
    REQUIRE(r->has_value());
    CHECK((*r)->submission.oid == std::string(40, 'b'));
    CHECK((*r)->submission.expect_old == std::optional<std::string>(std::string(40, 'a')));
    CHECK((*r)->submission.host == "host-a");
    CHECK((*r)->submission.submitter == ProcessIdentity{4242, 987654321, "5a1c6e3e-3c2b-4f7e-9d3a-0f1e2d3c4b5a"});
    REQUIRE((*r)->entries.size() == 2);
    CHECK((*r)->entries[1].step == Step::claimed);
  }

  TEST_CASE("J4: one id submitted by two hosts at once is recorded once; the other gets journal_conflict") {
    PG_CLUSTER_OR_SKIP(db);
    const std::string app_a = "git-courier/host-a/1", app_b = "git-courier/host-b/1";
    auto a = open_pg(db.url(), app_a);
    auto b = open_pg(db.url(), app_b);
    // A submission reads the id's row, then writes the row and its
    // `submitted` entry, in one transaction. Two submissions of one id meet
    // at one of three points, by when the second one reads the row; left
    // to two threads, the scheduler picks the point. Only the last one
    // (the first's row committed when the second reads) shows that the
    // journal refuses an id it knows: at the other two, the primary key
    // refuses the second. So each id is made to meet at one point, by
    // locks that sessions of the test hold on the real server, every point
    // in both host orders; the journal runs its own statements unchanged.
    enum Meet { both_read_first, read_uncommitted, read_committed, kMeets };
    const char* const meet_name[kMeets] = {"both read before either writes",
                                           "the second reads while the first's row is uncommitted",
                                           "the second's call is in flight when the first commits"};
    constexpr int kIds = 4 * kMeets;
    constexpr int kEach = kIds / kMeets;
    pg::Connection watch = connect(db.url(), "git-courier/test/watch");
    pg::Connection gate = connect(db.url(), "git-courier/test/gate");
    pg::Connection queue = connect(db.url(), "git-courier/test/queue");
    std::atomic<int> won{0}, conflicts{0}, other{0};
    int first_won[kMeets] = {}, refused_known[kMeets] = {}, refused_by_key[kMeets] = {};
    double longest_ms = 0;
    std::string unforced;  // where a meeting was not reached as planned
    for (int i = 0; i < kIds; ++i) {
      const auto how = static_cast<Meet>(i % kMeets);
      const bool a_first = (i / kMeets) % 2 == 0;
      const std::string id = "race-" + std::to_string(i);
      struct Side {
        Journal& journal;
        std::string host, app;
        std::optional<Result<void>> result;
        double ms = 0;
      };
      Side first{a_first ? *a : *b, a_first ? "host-a" : "host-b", a_first ? app_a : app_b, {}, 0};
      Side second{a_first ? *b : *a, a_first ? "host-b" : "host-a", a_first ? app_b : app_a, {}, 0};
      auto submit = [&](Side& side) {
        Submission s = submission(id);
        s.host = side.host;
        const sys::MonoNs t0 = sys::mono_now_ns();
        side.result = side.journal.submit(s, 1000 + i);
        side.ms = sys::ns_to_ms(sys::mono_now_ns() - t0);
        if (*side.result) {
          ++won;
        } else if (side.result->error().code == Errc::journal_conflict) {
          ++conflicts;
        } else {
          ++other;
        }
      };
      // The fact a meeting waits for: the session `app` waits for the lock
      // `what` (pg_locks), so it has reached that statement and no further.
      auto reached = [&](const std::string& app, const std::string& what) {
        std::string last;
        if (test::wait_for_fact([&] { return (last = waits_for(watch, app)) == what; }, 5'000, 1'000)) return;
        unforced += id + " (" + meet_name[how] + "): " + app + " waited for '" + last + "', not '" + what + "'\n";
      };
      // The gate, a table lock another session holds, stops the first
      // submission: at its write of the row, its read done (both_read_first:
      // SHARE lets the reads' FOR UPDATE through, not a write), or at its
      // `submitted` entry, its row written and not committed.
      require_ok(gate.exec_script(how == both_read_first ? "BEGIN; LOCK TABLE courier_delivery IN SHARE MODE"
                                                         : "BEGIN; LOCK TABLE courier_entry IN EXCLUSIVE MODE",
                                  within_ms(5000)));
      Result<void> queued;
      {
        // Joined when this block ends, whatever happened in it; every call
        // they make is bounded (kLockWaitMs, the queue's 10 s).
        std::jthread t1, tq, t2;
        t1 = std::jthread([&] { submit(first); });
        reached(first.app,
                how == both_read_first ? "courier_delivery RowExclusiveLock" : "courier_entry RowExclusiveLock");
        if (how == read_committed) {
          // A table lock queued behind the first's transaction. A lock
          // request that conflicts with one already waiting waits behind
          // it, so the second's read runs only once the first has
          // committed and the queue has had its turn and let go.
          tq = std::jthread([&] {
            queued =
                queue.exec_script("BEGIN; LOCK TABLE courier_delivery IN EXCLUSIVE MODE; COMMIT", within_ms(10'000));
          });
          reached("git-courier/test/queue", "courier_delivery ExclusiveLock");
        }
        t2 = std::jthread([&] { submit(second); });
        reached(second.app, how == both_read_first    ? "courier_delivery RowExclusiveLock"  // read no row, writing
                            : how == read_uncommitted ? "transactionid ShareLock"  // its row waits for the first's end
                                                      : "courier_delivery RowShareLock");  // its read, queued
        if (auto opened = gate.exec_script("COMMIT", within_ms(5000)); !opened) {
          unforced += id + ": the gate did not open: " + opened.error().message + "\n";
        }
      }
      if (how == read_committed && !queued)
        unforced += id + ": the queued lock failed: " + queued.error().message + "\n";
      REQUIRE(first.result.has_value());
      REQUIRE(second.result.has_value());
      longest_ms = std::max({longest_ms, first.ms, second.ms});
      first_won[how] += *first.result && !*second.result;
      for (const Side* side : {&first, &second}) {
        if (*side->result) continue;
        const std::string& why = side->result->error().message;
        const bool known = why.find("already has attempt 1, not finished") != std::string::npos;
        const bool by_key = why.find("submitted by another process or host at the same time") != std::string::npos;
        refused_known[how] += known;
        refused_by_key[how] += by_key;
        if (!known && !by_key) MESSAGE(meet_name[how] << ": " << why);
      }
    }
    for (int m = 0; m < kMeets; ++m) {
      test::report("pg-journal two hosts", std::string(meet_name[m]) + ": the first won", first_won[m], "");
      test::report("pg-journal two hosts", std::string(meet_name[m]) + ": refused as a known id", refused_known[m], "");
      test::report("pg-journal two hosts", std::string(meet_name[m]) + ": refused by the primary key",
                   refused_by_key[m], "");
    }
    test::report("pg-journal two hosts", "longest submit (bound " + std::to_string(kLockWaitMs) + " ms)", longest_ms,
                 "ms");
    CHECK(won.load() == kIds);
    CHECK(conflicts.load() == kIds);
    CHECK(other.load() == 0);
    CHECK_MESSAGE(unforced.empty(), unforced);
    // Stopped inside its transaction, the first one wins; the second one
    // is refused where it met the first: by the primary key when it read
    // no row, by the row's state when it read the committed row.
    CHECK(first_won[read_uncommitted] == kEach);
    CHECK(first_won[read_committed] == kEach);
    CHECK(refused_by_key[both_read_first] == kEach);
    CHECK(refused_by_key[read_uncommitted] == kEach);
    CHECK(refused_known[read_committed] == kEach);
    CHECK(db.sql("SELECT count(*) FROM courier_entry WHERE step = 'submitted'") == std::to_string(kIds));
    // The row's host is the winner's, and its submitted entry says the same.
    CHECK(db.sql("SELECT count(*) FROM courier_delivery d JOIN courier_entry e USING (id)"
                 " WHERE e.step = 'submitted' AND e.detail::jsonb ->> 'host' = d.host") == std::to_string(kIds));
  }

  TEST_CASE("database: hosts starting at once migrate the schema once; a newer schema is refused") {
    PG_CLUSTER_OR_SKIP(db);
    constexpr int kHosts = 4;
    std::vector<std::thread> hosts;
    std::atomic<int> ok{0};
    std::vector<std::string> errors(kHosts);
    for (int i = 0; i < kHosts; ++i) {
      hosts.emplace_back([&, i] {
        auto u = state::parse_state_url(db.url());
        auto j = u ? open_state(*u, "git-courier/host-" + std::to_string(i) + "/1")
                   : Result<std::unique_ptr<Journal>>(tl::unexpected(u.error()));
        if (j) {
          ++ok;
        } else {
          errors[static_cast<std::size_t>(i)] = j.error().message;
        }
      });
    }
    for (auto& t : hosts) t.join();
    for (const auto& e : errors) CHECK_MESSAGE(e.empty(), e);
    CHECK(ok.load() == kHosts);
    CHECK(db.sql("SELECT count(*) FROM courier_schema_version") == std::to_string(pg::schema_version()));
    db.sql("INSERT INTO courier_schema_version VALUES (" + std::to_string(pg::schema_version() + 1) + ")");
    auto u = state::parse_state_url(db.url());
    REQUIRE(u.has_value());
    auto newer = open_state(*u, "git-courier/test/1");
    REQUIRE_FALSE(newer.has_value());
    CHECK(newer.error().code == Errc::invalid_argument);
    CHECK(newer.error().message.find("newer than this program") != std::string::npos);
  }

  TEST_CASE("X-PG1 database: a lost session is made again once; a stopped server is database_failed within the bound") {
    PG_CLUSTER_OR_SKIP(db);
    auto j = open_pg(db.url(), "git-courier/host-a/1");
    require_ok(j->submit(submission("d-1"), 1000));
    // The server ends the session (a partition, seen from its side): the next call reconnects.
    REQUIRE(db.terminate("git-courier/host-a/") == 1);
    require_ok(j->append("d-1", entry(Step::claimed), false));
    db.stop();
    const sys::MonoNs t0 = sys::mono_now_ns();
    auto r = j->append("d-1", entry(Step::dispatched), false);
    const double ms = sys::ns_to_ms(sys::mono_now_ns() - t0);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::database_failed);
    CHECK(r.error().message.find("127.0.0.1") != std::string::npos);
    CHECK(ms < static_cast<double>(kLockWaitMs) + 500.0);
    test::report("pg-journal stopped server", "append fails after", ms, "ms");
    db.restart();
    require_ok(j->append("d-1", entry(Step::dispatched), false));
  }

  TEST_CASE(
      "X-PG1 database: a server that stops answering mid-statement is database_failed at the call's bound, not a "
      "hang") {
    PG_CLUSTER_OR_SKIP(db);
    auto j = open_pg(db.url(), "git-courier/frozen/1");
    require_ok(j->submit(submission("d-1"), 1000));
    const std::string pid = db.sql("SELECT pid FROM pg_stat_activity WHERE application_name = 'git-courier/frozen/1'");
    REQUIRE_FALSE(pid.empty());
    // The session's backend frozen: the statement is sent and never answered.
    REQUIRE(::kill(std::stoi(pid), SIGSTOP) == 0);
    const sys::MonoNs t0 = sys::mono_now_ns();
    auto r = j->append("d-1", entry(Step::claimed), false);
    const double ms = sys::ns_to_ms(sys::mono_now_ns() - t0);
    ::kill(std::stoi(pid), SIGCONT);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::database_failed);
    CHECK(r.error().message.find("within the time allowed") != std::string::npos);
    // The call's one bound, the second try on a new session included.
    CHECK(ms >= static_cast<double>(kLockWaitMs) - 50.0);
    CHECK(ms < static_cast<double>(kLockWaitMs) + 500.0);
    test::report("pg-journal frozen backend", "append fails after", ms, "ms");
  }
}

}  // namespace integration_pg_journal
