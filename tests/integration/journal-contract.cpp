// journal-contract.cpp — the journal's contract (journal.hpp), written once
// against the Journal interface and run on both stores: SQLite (a fresh file
// per clause) and PostgreSQL (one throwaway cluster for the whole run, its
// tables emptied between clauses). What each backend alone must prove (file
// modes, locks, a server crash, two hosts meeting at the primary key) stays in
// unit/journal.cpp and integration/pg-journal.cpp.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "journal/journal.hpp"
#include "journal_fixtures.hpp"
#include "pg_support.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_journal_contract {

using namespace courier;
using namespace courier::journal;

namespace {

// One store under the contract, for one clause: a handle on a journal that
// was empty when the clause began (each call another connection to it),
// and a way to make a row's outcome unreadable behind the journal's back.
struct Store {
  std::function<std::unique_ptr<Journal>()> open;
  std::function<void(const std::string& id)> spoil_outcome;
};

using test::journal_entry;
using test::journal_submission;

Submission submission(const std::string& id, int attempt = 1) { return journal_submission(id, attempt); }

Entry entry(Step step, int attempt = 1, const std::string& detail = "{}") {
  return journal_entry(step, attempt, detail);
}

Entry finished(OutcomeKind kind, int attempt = 1) {
  Outcome o;
  o.kind = kind;
  o.attempt = attempt;
  o.remote_effect = RemoteEffect::possible;
  return entry(Step::finished, attempt, outcome_detail(o));
}

Entry revocation(RevokeCause cause, bool claimed) {
  return entry(Step::revoke_requested, 1,
               std::string(R"({"cause":")") + revoke_cause_name(cause) + R"(","reason":"stop","claimed":)" +
                   (claimed ? "true" : "false") + "}");
}

void require_ok(const Result<void>& r) { REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.error().message)); }

// The error code of a refused call; none when it was accepted.
std::optional<Errc> refused(const Result<void>& r) {
  if (r) return std::nullopt;
  return r.error().code;
}

// A refusal whose message says `words`.
bool says(const Result<void>& r, const std::string& words) {
  return !r && r.error().message.find(words) != std::string::npos;
}

std::string message_of(const Result<void>& r) { return r ? std::string("(accepted)") : r.error().message; }

Record found(Journal& j, const std::string& id) {
  auto r = j.find(id);
  REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.error().message));
  REQUIRE_MESSAGE(r->has_value(), "no delivery " << id);
  return std::move(**r);
}

std::vector<std::string> sorted_ids(const Result<std::vector<Record>>& records) {
  REQUIRE_MESSAGE(records.has_value(), (records ? std::string() : records.error().message));
  std::vector<std::string> out;
  for (const Record& r : *records) out.push_back(r.submission.id);
  std::sort(out.begin(), out.end());
  return out;
}

// ---- the clauses -----------------------------------------------------------------

void submission_found_again(const Store& store) {
  auto j = store.open();
  Submission s = submission("d-1");
  s.note = R"({"ticket":7})";
  require_ok(j->submit(s, 1'800'000'000'000));
  const Record r = found(*j, "d-1");
  CHECK(r.submission.id == s.id);
  CHECK(r.submission.attempt == 1);
  CHECK(r.submission.repo == s.repo);
  CHECK(r.submission.remote == s.remote);
  CHECK(r.submission.lane == s.lane);
  CHECK(r.submission.ref == s.ref);
  CHECK(r.submission.oid == s.oid);
  CHECK(r.submission.expect_old == s.expect_old);
  CHECK(r.submission.deadline_unix_ms == s.deadline_unix_ms);
  CHECK(r.submission.submitter == s.submitter);
  CHECK(r.submission.host == "host-a");
  CHECK(r.submission.note == s.note);
  CHECK_FALSE(r.finished);
  REQUIRE(r.entries.size() == 1);
  CHECK(r.entries[0].step == Step::submitted);
  CHECK(r.entries[0].at_unix_ms == 1'800'000'000'000);
  CHECK(detail_text(r.entries[0].detail, "oid") == s.oid);
  CHECK(detail_text(r.entries[0].detail, "expect_old") == *s.expect_old);
  // No expect_old is kept as none, not as "".
  Submission plain = submission("d-2");
  plain.expect_old.reset();
  require_ok(j->submit(plain, 1));
  CHECK_FALSE(found(*j, "d-2").submission.expect_old.has_value());
  auto never = j->find("never");
  REQUIRE(never.has_value());
  CHECK_FALSE(never->has_value());
}

void entries_in_order(const Store& store) {
  auto j = store.open();
  require_ok(j->submit(submission("d"), 1));
  const std::vector<Step> steps = {Step::claimed, Step::dispatched, Step::advertised, Step::post_started,
                                   Step::answered};
  std::int64_t at = 100;
  for (Step s : steps) {
    const std::string detail = std::string("{\"n\":\"") + step_name(s) + "\"}";
    require_ok(j->append("d", Entry{s, 1, at++, detail}, s == Step::post_started));
  }
  require_ok(j->append("d", finished(OutcomeKind::delivered), false));
  const Record r = found(*j, "d");
  REQUIRE(r.entries.size() == steps.size() + 2);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    CHECK(r.entries[i + 1].step == steps[i]);
    CHECK(r.entries[i + 1].attempt == 1);
    CHECK(r.entries[i + 1].at_unix_ms == 100 + static_cast<std::int64_t>(i));
    CHECK(detail_text(r.entries[i + 1].detail, "n") == step_name(steps[i]));
  }
  CHECK(r.finished);
  CHECK(r.last(Step::advertised)->at_unix_ms == 102);
  CHECK_FALSE(r.last(Step::revoke_requested).has_value());
}

void unknown_and_malformed_refused(const Store& store) {
  auto j = store.open();
  auto ghost = j->append("ghost", entry(Step::claimed), false);
  CHECK(refused(ghost) == Errc::journal_failed);
  CHECK_MESSAGE(says(ghost, "ghost"), message_of(ghost));
  CHECK_MESSAGE(says(ghost, j->where()), message_of(ghost));
  require_ok(j->submit(submission("d"), 1));
  // A submitted entry comes from submit() only.
  CHECK(refused(j->append("d", entry(Step::submitted), false)) == Errc::journal_conflict);
  // A finished entry must carry an outcome (open_work reads its kind).
  CHECK(refused(j->append("d", entry(Step::finished, 1, R"({"kind":"nonsense"})"), false)) == Errc::journal_failed);
  CHECK(refused(j->submit(submission(""), 1)) == Errc::journal_failed);
  CHECK_FALSE(found(*j, "d").finished);
}

void nothing_after_finished(const Store& store) {
  auto j = store.open();
  require_ok(j->submit(submission("d"), 1));
  require_ok(j->append("d", finished(OutcomeKind::interrupted), false));
  for (Step s :
       {Step::finished, Step::claimed, Step::dispatched, Step::post_started, Step::answered, Step::revoke_requested}) {
    CAPTURE(step_name(s));
    auto again =
        s == Step::finished ? j->append("d", finished(OutcomeKind::delivered), true) : j->append("d", entry(s), false);
    CHECK(refused(again) == Errc::journal_conflict);
    CHECK_MESSAGE(says(again, "already finished"), message_of(again));
  }
  // interrupted retained no seat: there is no stop to confirm.
  CHECK(refused(j->append("d", entry(Step::stop_confirmed), true)) == Errc::journal_conflict);
  const Record r = found(*j, "d");
  CHECK(r.entries.size() == 2);
  CHECK(outcome_from_detail(r.last(Step::finished)->detail)->kind == OutcomeKind::interrupted);
}

void racing_finishers(const Store& store) {
  auto owner = store.open();
  auto recovery = store.open();
  for (int round = 0; round < 20; ++round) {
    const std::string id = "race-" + std::to_string(round);
    require_ok(owner->submit(submission(id), 1));
    Result<void> a, b;
    std::thread ta([&] { a = owner->append(id, finished(OutcomeKind::delivered), false); });
    std::thread tb([&] { b = recovery->append(id, finished(OutcomeKind::interrupted), false); });
    ta.join();
    tb.join();
    CHECK(a.has_value() != b.has_value());
    const Result<void>& loser = a ? b : a;
    if (!loser) CHECK(loser.error().code == Errc::journal_conflict);
    const Record r = found(*owner, id);
    CHECK(std::count_if(r.entries.begin(), r.entries.end(), [](const Entry& e) { return e.step == Step::finished; }) ==
          1);
  }
}

void attempts_in_order(const Store& store) {
  auto j = store.open();
  auto other = store.open();
  CHECK(refused(j->submit(submission("d", 2), 1)) == Errc::journal_conflict);  // never submitted
  require_ok(j->submit(submission("d", 1), 1));
  auto twice = other->submit(submission("d", 1), 2);
  CHECK(refused(twice) == Errc::journal_conflict);
  CHECK_MESSAGE(says(twice, "already has attempt 1, not finished"), message_of(twice));
  CHECK(refused(j->submit(submission("d", 2), 3)) == Errc::journal_conflict);  // 1 is not finished
  require_ok(j->append("d", finished(OutcomeKind::deadline_killed), false));
  CHECK(refused(j->submit(submission("d", 3), 4)) == Errc::journal_conflict);  // not the next one
  CHECK(refused(j->submit(submission("d", 1), 4)) == Errc::journal_conflict);  // not again
  Submission second = submission("d", 2);
  second.expect_old = std::string(40, 'c');  // the re-delivery's compare-and-swap on the old id
  require_ok(other->submit(second, 5));
  CHECK(refused(j->submit(submission("d", 2), 6)) == Errc::journal_conflict);  // taken once
  CHECK(refused(j->append("d", entry(Step::claimed, 1), false)) == Errc::journal_conflict);
  require_ok(j->append("d", entry(Step::claimed, 2), false));
  const Record r = found(*j, "d");
  CHECK(r.submission.attempt == 2);
  CHECK(r.submission.expect_old == second.expect_old);
  CHECK_FALSE(r.finished);
  CHECK(r.entries.size() == 4);
  CHECK(r.latest().size() == 2);
  CHECK_FALSE(r.last(Step::finished).has_value());  // attempt 1's does not count
}

void open_work_until_confirmed(const Store& store) {
  auto j = store.open();
  for (const char* id : {"open", "delivered", "unreaped", "uncertain"}) require_ok(j->submit(submission(id), 1));
  require_ok(j->append("delivered", finished(OutcomeKind::delivered), false));
  require_ok(j->append("unreaped", finished(OutcomeKind::unreaped), false));
  require_ok(j->append("uncertain", finished(OutcomeKind::cancel_uncertain), false));
  CHECK(sorted_ids(j->open_work()) == std::vector<std::string>{"open", "uncertain", "unreaped"});
  // stop_confirmed only on a finished row whose stop was retained, once.
  CHECK(refused(j->append("open", entry(Step::stop_confirmed), false)) == Errc::journal_conflict);
  CHECK(refused(j->append("delivered", entry(Step::stop_confirmed), false)) == Errc::journal_conflict);
  require_ok(j->append("unreaped", entry(Step::stop_confirmed, 1, R"({"by":"recovery"})"), true));
  CHECK(refused(j->append("unreaped", entry(Step::stop_confirmed), false)) == Errc::journal_conflict);
  CHECK(sorted_ids(j->open_work()) == std::vector<std::string>{"open", "uncertain"});
  // A new attempt of a confirmed one is open work again until it finishes.
  require_ok(j->submit(submission("unreaped", 2), 9));
  CHECK(sorted_ids(j->open_work()) == std::vector<std::string>{"open", "uncertain", "unreaped"});
  // An outcome nobody can read says nothing of a confirmed stop: open work.
  store.spoil_outcome("delivered");
  CHECK(sorted_ids(j->open_work()) == std::vector<std::string>{"delivered", "open", "uncertain", "unreaped"});
}

void recent_newest_first(const Store& store) {
  auto j = store.open();
  for (int i = 0; i < 5; ++i) require_ok(j->submit(submission("d" + std::to_string(i)), 1000 + (i % 2)));
  auto r = j->recent(3);
  REQUIRE(r.has_value());
  REQUIRE(r->size() == 3);
  CHECK((*r)[0].submission.id == "d3");  // 1001: d1, d3 (later first); then 1000: d4
  CHECK((*r)[1].submission.id == "d1");
  CHECK((*r)[2].submission.id == "d4");
  CHECK(j->recent(0).value().empty());
}

void appends_from_many_threads(const Store& store) {
  auto j = store.open();
  constexpr int kThreads = 4, kEach = 25;
  for (int i = 0; i < kThreads; ++i) require_ok(j->submit(submission("t" + std::to_string(i)), 1));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < kEach; ++n) {
        if (!j->append("t" + std::to_string(i), Entry{Step::advertised, 1, n, "{}"}, n % 5 == 0)) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  for (int i = 0; i < kThreads; ++i) {
    const Record r = found(*j, "t" + std::to_string(i));
    REQUIRE(r.entries.size() == kEach + 1);
    for (int n = 0; n < kEach; ++n) CHECK(r.entries[static_cast<std::size_t>(n + 1)].at_unix_ms == n);
  }
}

void cancellation_before_claim_final(const Store& store) {
  auto j = store.open();
  auto other = store.open();  // another process (or host) that would claim it
  for (RevokeCause by : {RevokeCause::caller, RevokeCause::authority}) {
    const std::string id = std::string("cancelled-") + revoke_cause_name(by);
    CAPTURE(id);
    require_ok(j->submit(submission(id), 1));
    require_ok(j->append(id, revocation(by, false), true));
    for (Step s : {Step::claimed, Step::dispatched, Step::advertised, Step::post_started, Step::answered}) {
      CAPTURE(step_name(s));
      auto late = other->append(id, entry(s), s == Step::post_started);
      CHECK(refused(late) == Errc::journal_conflict);
      CHECK_MESSAGE(says(late, "a cancellation is final"), message_of(late));
    }
    // Its outcome is written, and the id is never run again.
    require_ok(j->append(id, finished(OutcomeKind::cancelled_no_dispatch), false));
    auto again = other->submit(submission(id, 2), 2);
    CHECK(refused(again) == Errc::journal_conflict);
    CHECK_MESSAGE(says(again, "a new delivery needs a new id"), message_of(again));
    const Record r = found(*j, id);
    CHECK(r.submission.attempt == 1);
    CHECK(r.entries.size() == 3);
  }
}

void cancellation_while_live_final(const Store& store) {
  auto j = store.open();
  for (RevokeCause by : {RevokeCause::caller, RevokeCause::authority}) {
    const std::string id = std::string("live-") + revoke_cause_name(by);
    CAPTURE(id);
    require_ok(j->submit(submission(id), 1));
    require_ok(j->append(id, revocation(by, true), true));
    // The claim (won before the revocation, its entry slower) and the
    // child are recorded: recovery identifies the child by them (J3).
    require_ok(j->append(id, entry(Step::claimed), false));
    require_ok(j->append(id, entry(Step::dispatched), false));
    auto post = j->append(id, entry(Step::post_started), true);
    CHECK(refused(post) == Errc::journal_conflict);
    CHECK_MESSAGE(says(post, "no POST begins after it"), message_of(post));
    require_ok(j->append(id, finished(OutcomeKind::interrupted), false));
    CHECK(refused(j->submit(submission(id, 2), 2)) == Errc::journal_conflict);
    CHECK_FALSE(found(*j, id).last(Step::post_started).has_value());
  }
}

void stop_not_final(const Store& store) {
  auto j = store.open();
  for (RevokeCause by : {RevokeCause::shutdown, RevokeCause::lease_lost}) {
    const std::string id = std::string("stopped-") + revoke_cause_name(by);
    CAPTURE(id);
    require_ok(j->submit(submission(id), 1));
    require_ok(j->append(id, revocation(by, false), true));
    require_ok(j->append(id, finished(OutcomeKind::revoked), false));
    require_ok(j->submit(submission(id, 2), 2));
    require_ok(j->append(id, entry(Step::claimed, 2), false));
    require_ok(j->append(id, entry(Step::post_started, 2), true));
  }
}

struct Clause {
  const char* name;
  void (*run)(const Store&);
};

const Clause kContract[] = {
    {"J1: a submission is found again with every field, its submitted entry carrying it as JSON",
     submission_found_again},
    {"J1: entries come back in the order they were appended, with step, attempt, time and detail", entries_in_order},
    {"J1: an unknown id, a submitted entry by append and a finished entry without an outcome are refused",
     unknown_and_malformed_refused},
    {"J3: after finished, every entry but a retained stop's confirmation is refused", nothing_after_finished},
    {"J3: two handles racing to finish one delivery: exactly one wins, the other gets journal_conflict",
     racing_finishers},
    {"J4: the next attempt only after the latest finished, once; entries of an earlier attempt refused",
     attempts_in_order},
    {"J3: open_work lists the unfinished and the unconfirmed until their stop is confirmed, once",
     open_work_until_confirmed},
    {"J1: recent lists the latest submissions newest first, up to the limit", recent_newest_first},
    {"J1: appends from many threads on one handle all land, each thread's in its order", appends_from_many_threads},
    {"J5: a cancellation by the caller or authority before the claim is final: no dispatch step, no next attempt",
     cancellation_before_claim_final},
    {"J5: a cancellation of a live delivery is final: its child recorded, no POST, no next attempt",
     cancellation_while_live_final},
    {"J5: a stop by a shutdown or a lost lease is not final: the next attempt runs", stop_not_final},
};

// Runs every clause, each on a journal that was empty when it began
// (`fresh` empties or makes it); prints how many ran.
void run_contract(const std::string& backend, const std::function<Store()>& fresh) {
  int ran = 0;
  for (const Clause& c : kContract) {
    INFO(backend << ": " << c.name);
    const Store store = fresh();
    c.run(store);
    ++ran;
  }
  MESSAGE(backend << ": " << ran << " clauses of the journal's contract");
  CHECK(ran == static_cast<int>(std::size(kContract)));
}

void spoil_sqlite_outcome(const std::string& path, const std::string& id) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  const std::string sql = "UPDATE deliveries SET outcome = '{garbage' WHERE id = '" + id + "'";
  CHECK(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
}

}  // namespace

TEST_SUITE("journal-contract") {
  TEST_CASE("J1 J3 J4 J5: the journal's contract holds on SQLite, clause by clause, each on a fresh file") {
    std::vector<std::unique_ptr<test::TempDir>> dirs;
    run_contract("SQLite", [&] {
      dirs.push_back(std::make_unique<test::TempDir>());
      const std::string path = dirs.back()->path() + "/journal.sqlite";
      return Store{[path] {
                     auto j = open_sqlite(path);
                     REQUIRE_MESSAGE(j.has_value(), (j ? std::string() : j.error().message));
                     return std::move(*j);
                   },
                   [path](const std::string& id) { spoil_sqlite_outcome(path, id); }};
    });
  }

  TEST_CASE("J1 J3 J4 J5: the journal's contract holds on PostgreSQL, clause by clause, on one throwaway cluster") {
    PG_CLUSTER_OR_SKIP(db);
    const std::string url = db.url();
    run_contract("PostgreSQL", [&] {
      // The schema is made by the first open; later clauses start empty.
      if (db.sql("SELECT count(*) FROM information_schema.tables WHERE table_name = 'courier_entry'") == "1") {
        db.sql("TRUNCATE courier_entry, courier_delivery");
      }
      return Store{[url] {
                     auto u = state::parse_state_url(url);
                     REQUIRE_MESSAGE(u.has_value(), (u ? std::string() : u.error().message));
                     auto j = open_state(*u, "git-courier/contract/1");
                     REQUIRE_MESSAGE(j.has_value(), (j ? std::string() : j.error().message));
                     return std::move(*j);
                   },
                   [&db](const std::string& id) {
                     db.sql("UPDATE courier_delivery SET outcome = '{garbage', outcome_kind = NULL WHERE id = " +
                            test::sql_literal(id));
                   }};
    });
  }
}

}  // namespace integration_journal_contract
