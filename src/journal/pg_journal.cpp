// pg_journal.cpp — the delivery journal in PostgreSQL (journal.hpp): one
// journal shared by the hosts of a fleet, a store (journal_store.hpp) under
// the same rule set as the SQLite journal (journal_rules.hpp).
//
// Durability (J1). Every commit is synced to the server's WAL before COMMIT
// returns (synchronous_commit=on, PostgreSQL's default), ordinary appends
// included. The SQLite journal leaves ordinary appends unsynced because the
// crash it must survive is this process's; here the database is another
// machine's processes, whose crash would lose an asynchronous commit (up to
// wal_writer_delay of them) while this host goes on as if it were written:
// a `finished` lost so would have recovery finish a delivery twice.
//
// Across hosts. A submission takes the row's lock (SELECT ... FOR UPDATE) or,
// for a new id, inserts it: two hosts submitting one id at once meet at the
// primary key, and the loser's unique violation is journal_conflict, as a
// second submission in one process is (J4: the delivery runs once).
//
// Every call is bounded by kLockWaitMs (a lost server is an error by then,
// never a hang); the connection, when lost, is made once again.
#include <algorithm>
#include <climits>
#include <functional>
#include <mutex>
#include <optional>

#include "journal/journal_store.hpp"
#include "pg/connection.hpp"
#include "sys/clock.hpp"

namespace courier::journal {

namespace {

enum class Txn { read, write, durable };

using pg::Params;

std::optional<std::string> text(std::string s) { return std::optional<std::string>(std::move(s)); }
std::optional<std::string> number(std::int64_t v) { return std::to_string(v); }
std::int64_t integer(const pg::Row& r, std::size_t col) { return r[col] ? std::stoll(*r[col]) : 0; }
std::string str(const pg::Row& r, std::size_t col) { return r[col] ? *r[col] : std::string(); }

// The kinds is_unconfirmed() names, as a PostgreSQL text array: the query
// asks the outcome table, it keeps no list of its own.
std::string unconfirmed_kinds() {
  std::string out;
  for (const auto& row : kOutcomeRows) {
    if (row.seat == SeatDisposition::retain) out += (out.empty() ? "" : ",") + std::string(row.word);
  }
  return "{" + out + "}";
}

class PgJournal final : public JournalStore {
 public:
  PgJournal(pg::ConnectOptions options, pg::Connection c, std::string where)
      : options_(std::move(options)), conn_(std::move(c)), where_(std::move(where)) {}

  const std::string& where() const override { return where_; }
  Result<std::optional<Record>> find(const std::string& id) override;
  Result<std::vector<Record>> recent(std::size_t limit) override;
  Result<std::vector<Record>> open_work() override;

 private:
  using Body = std::function<Result<void>(pg::Connection&, sys::MonoNs)>;
  // Runs body in one transaction under mu_, the whole call bounded by
  // kLockWaitMs; run again once, on a new connection and within the same
  // bound, when the connection was lost before COMMIT was sent (nothing of
  // it can have been committed). A lost COMMIT is not retried: it may have
  // been committed, and a second submit would then be a conflict.
  Result<void> transaction(Txn kind, const Body& body);
  Result<void> attempt(Txn kind, const Body& body, sys::MonoNs until, bool& committing);
  Result<void> ensure_connected(sys::MonoNs until);
  tl::unexpected<Error> failure(const std::string& why) const {
    return fail(Errc::journal_failed, "journal " + where() + ": " + why);
  }
  // The store (journal_store.hpp): the row read with its lock (SELECT ...
  // FOR UPDATE) stays as read until the commit; a new id's row is
  // claimed by its insert (the primary key).
  Result<void> write_transaction(bool durable, const std::function<Result<void>()>& body) override;
  Result<std::optional<Row>> read_row(const std::string& id) override;
  Result<void> write_row(const Submission& s, std::int64_t at_unix_ms, bool insert) override;
  Result<void> close_row(const std::string& id, const std::string& outcome_detail) override;
  Result<void> append_entry(const std::string& id, const Entry& e) override;
  // The delivery's entries, oldest first: every attempt's, or one's.
  Result<std::vector<Entry>> load_entries(pg::Connection& c, const std::string& id, std::optional<int> attempt,
                                          sys::MonoNs until) const;
  Result<std::optional<Record>> load(pg::Connection& c, const std::string& id, sys::MonoNs until) const;
  Result<std::vector<Record>> load_all(pg::Connection& c, const pg::Rows& ids, sys::MonoNs until) const;

  pg::ConnectOptions options_;
  std::mutex mu_;
  std::optional<pg::Connection> conn_;
  std::string where_;
  // Inside write_transaction (under mu_): its connection and its bound.
  pg::Connection* txn_ = nullptr;
  sys::MonoNs txn_until_ = 0;
};

Result<void> PgJournal::ensure_connected(sys::MonoNs until) {
  if (conn_ && !conn_->broken()) return {};
  conn_.reset();
  auto c = pg::Connection::open(options_, until);
  if (!c) return tl::unexpected(c.error());
  conn_.emplace(std::move(*c));
  return {};
}

Result<void> PgJournal::attempt(Txn kind, const Body& body, sys::MonoNs until, bool& committing) {
  if (auto up = ensure_connected(until); !up) return up;
  pg::Connection& c = *conn_;
  // A read sees one snapshot across its statements (a record and its entries agree).
  const char* begin = kind == Txn::read ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN";
  Result<void> r = c.exec_script(begin, until);
  if (r) r = body(c, until);
  if (r) {
    committing = true;
    r = c.exec_script("COMMIT", until);
  }
  // Whatever failed (the body, the commit): the transaction must not stay open.
  if (!r && !c.broken()) (void)c.exec_script("ROLLBACK", until);
  return r;
}

Result<void> PgJournal::transaction(Txn kind, const Body& body) {
  std::lock_guard lock(mu_);
  // One bound for the whole call, the second try included.
  const sys::MonoNs until = sys::mono_after_ms(sys::mono_now_ns(), kLockWaitMs);
  bool committing = false;
  auto r = attempt(kind, body, until, committing);
  if (r || committing || !conn_ || !conn_->broken()) return r;
  // Lost before COMMIT: nothing of it was committed, so it is run again once.
  return attempt(kind, body, until, committing);
}

Result<void> PgJournal::write_transaction(bool durable, const std::function<Result<void>()>& body) {
  return transaction(durable ? Txn::durable : Txn::write, [&](pg::Connection& c, sys::MonoNs until) {
    txn_ = &c;
    txn_until_ = until;
    auto r = body();
    txn_ = nullptr;
    return r;
  });
}

Result<std::optional<JournalStore::Row>> PgJournal::read_row(const std::string& id) {
  auto q = txn_->exec("SELECT attempt, finished FROM courier_delivery WHERE id = $1 FOR UPDATE", {id}, txn_until_);
  if (!q) return tl::unexpected(q.error());
  if (q->rows.empty()) return std::optional<Row>();
  Row row{static_cast<int>(integer(q->rows[0], 0)), str(q->rows[0], 1) == "t", {}};
  auto latest = load_entries(*txn_, id, row.attempt, txn_until_);
  if (!latest) return tl::unexpected(latest.error());
  row.latest = std::move(*latest);
  return std::optional<Row>(std::move(row));
}

Result<void> PgJournal::append_entry(const std::string& id, const Entry& e) {
  auto q = txn_->exec("INSERT INTO courier_entry (id, attempt, step, at_unix_ms, detail) VALUES ($1, $2, $3, $4, $5)",
                      {id, number(e.attempt), text(step_name(e.step)), number(e.at_unix_ms), e.detail}, txn_until_);
  if (!q) return tl::unexpected(q.error());
  return {};
}

Result<void> PgJournal::write_row(const Submission& s, std::int64_t at_unix_ms, bool insert) {
  // One parameter order for both: $1 is the id.
  const char* sql =
      insert ? "INSERT INTO courier_delivery (id, attempt, repo, remote, lane, ref, oid, expect_old, deadline_unix_ms,"
               " submitter_pid, submitter_start_ticks, submitter_boot_id, submitted_unix_ms, host, request, finished)"
               " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, false)"
             : "UPDATE courier_delivery SET attempt = $2, repo = $3, remote = $4, lane = $5, ref = $6, oid = $7,"
               " expect_old = $8, deadline_unix_ms = $9, submitter_pid = $10, submitter_start_ticks = $11,"
               " submitter_boot_id = $12, submitted_unix_ms = $13, host = $14, request = $15, finished = false"
               " WHERE id = $1";
  const Params params = {s.id,
                         number(s.attempt),
                         s.repo,
                         s.remote,
                         s.lane,
                         s.ref,
                         s.oid,
                         s.expect_old,
                         number(s.deadline_unix_ms),
                         number(s.submitter.pid),
                         number(static_cast<std::int64_t>(s.submitter.start_ticks)),
                         s.submitter.boot_id,
                         number(at_unix_ms),
                         s.host,
                         request_detail(s)};
  auto q = txn_->exec(sql, params, txn_until_);
  if (q) return {};
  // Two hosts inserted the same new id at once (neither read a row): the
  // other one's stands, as if this one had read it.
  if (txn_->last_sqlstate() == pg::kUniqueViolation) {
    return refused(Error{Errc::journal_conflict,
                         "delivery " + s.id + " was submitted by another process or host at the same time"});
  }
  return tl::unexpected(q.error());
}

Result<void> PgJournal::close_row(const std::string& id, const std::string& outcome_detail) {
  // The kind in a column of its own, for open_work's query (the rules
  // accepted the entry: its outcome reads).
  auto o = outcome_from_detail(outcome_detail);
  const std::optional<std::string> kind = o ? std::optional<std::string>(outcome_name(o->kind)) : std::nullopt;
  auto q = txn_->exec("UPDATE courier_delivery SET finished = true, outcome = $2, outcome_kind = $3 WHERE id = $1",
                      {id, outcome_detail, kind}, txn_until_);
  if (!q) return tl::unexpected(q.error());
  return {};
}

Result<std::vector<Entry>> PgJournal::load_entries(pg::Connection& c, const std::string& id, std::optional<int> attempt,
                                                   sys::MonoNs until) const {
  auto q = c.exec(
      "SELECT step, attempt, at_unix_ms, detail FROM courier_entry WHERE id = $1"
      " AND ($2::integer IS NULL OR attempt = $2::integer) ORDER BY seq",
      {id, attempt ? number(*attempt) : std::nullopt}, until);
  if (!q) return tl::unexpected(q.error());
  std::vector<Entry> out;
  for (const pg::Row& e : q->rows) {
    const auto step = step_from_name(str(e, 0));
    if (!step) return failure("delivery " + id + " has an entry of unknown step '" + str(e, 0) + "'");
    out.push_back(Entry{*step, static_cast<int>(integer(e, 1)), integer(e, 2), str(e, 3)});
  }
  return out;
}

Result<std::optional<Record>> PgJournal::load(pg::Connection& c, const std::string& id, sys::MonoNs until) const {
  auto q = c.exec(
      "SELECT attempt, repo, remote, lane, ref, oid, expect_old, deadline_unix_ms, submitter_pid,"
      " submitter_start_ticks, submitter_boot_id, finished, host, request FROM courier_delivery WHERE id = $1",
      {id}, until);
  if (!q) return tl::unexpected(q.error());
  if (q->rows.empty()) return std::optional<Record>();
  const pg::Row& row = q->rows[0];
  Record r;
  Submission& s = r.submission;
  s.id = id;
  s.attempt = static_cast<int>(integer(row, 0));
  s.repo = str(row, 1);
  s.remote = str(row, 2);
  s.lane = str(row, 3);
  s.ref = str(row, 4);
  s.oid = str(row, 5);
  s.expect_old = row[6];
  s.deadline_unix_ms = integer(row, 7);
  s.submitter = ProcessIdentity{integer(row, 8), static_cast<std::uint64_t>(integer(row, 9)), str(row, 10)};
  r.finished = str(row, 11) == "t";
  s.host = str(row, 12);
  read_request(row[13], s);
  auto entries = load_entries(c, id, std::nullopt, until);
  if (!entries) return tl::unexpected(entries.error());
  r.entries = std::move(*entries);
  if (auto submitted = r.last(Step::submitted)) s.note = note_of_detail(submitted->detail);
  return std::optional<Record>(std::move(r));
}

Result<std::vector<Record>> PgJournal::load_all(pg::Connection& c, const pg::Rows& ids, sys::MonoNs until) const {
  std::vector<Record> out;
  for (const pg::Row& id : ids.rows) {
    auto r = load(c, str(id, 0), until);
    if (!r) return tl::unexpected(r.error());
    if (*r) out.push_back(std::move(**r));
  }
  return out;
}

Result<std::optional<Record>> PgJournal::find(const std::string& id) {
  std::optional<Record> out;
  auto done = transaction(Txn::read, [&](pg::Connection& c, sys::MonoNs until) -> Result<void> {
    auto r = load(c, id, until);
    if (!r) return tl::unexpected(r.error());
    out = std::move(*r);
    return {};
  });
  if (!done) return tl::unexpected(done.error());
  return out;
}

Result<std::vector<Record>> PgJournal::recent(std::size_t limit) {
  std::vector<Record> out;
  const auto n = static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX));
  auto done = transaction(Txn::read, [&](pg::Connection& c, sys::MonoNs until) -> Result<void> {
    // Newest first; within one millisecond, the later `submitted` entry first.
    auto ids = c.exec(
        "SELECT id FROM courier_delivery d ORDER BY submitted_unix_ms DESC,"
        " (SELECT max(seq) FROM courier_entry e WHERE e.id = d.id AND e.step = 'submitted') DESC LIMIT $1",
        {number(n)}, until);
    if (!ids) return tl::unexpected(ids.error());
    auto all = load_all(c, *ids, until);
    if (!all) return tl::unexpected(all.error());
    out = std::move(*all);
    return {};
  });
  if (!done) return tl::unexpected(done.error());
  return out;
}

Result<std::vector<Record>> PgJournal::open_work() {
  std::vector<Record> out;
  auto done = transaction(Txn::read, [&](pg::Connection& c, sys::MonoNs until) -> Result<void> {
    // Oldest first: every unfinished row, and every finished one whose
    // outcome is unconfirmed (or unknown: nothing says its stop was
    // confirmed) and whose current attempt has no stop_confirmed.
    auto ids = c.exec(
        "SELECT id FROM courier_delivery d WHERE NOT finished OR ("
        " coalesce(d.outcome_kind = ANY ($1::text[]), true)"
        " AND NOT EXISTS (SELECT 1 FROM courier_entry e WHERE e.id = d.id AND e.attempt = d.attempt"
        "   AND e.step = 'stop_confirmed')) ORDER BY submitted_unix_ms, id",
        {unconfirmed_kinds()}, until);
    if (!ids) return tl::unexpected(ids.error());
    auto all = load_all(c, *ids, until);
    if (!all) return tl::unexpected(all.error());
    out = std::move(*all);
    return {};
  });
  if (!done) return tl::unexpected(done.error());
  return out;
}

}  // namespace

Result<std::unique_ptr<Journal>> open_postgres(const state::StateUrl& url, const std::string& application_name,
                                               std::int64_t connect_until) {
  if (url.kind != state::StateUrl::Kind::postgres) {
    return fail(Errc::invalid_argument, "open_postgres: '" + url.redacted + "' is not a PostgreSQL URL");
  }
  pg::ConnectOptions options{url.conninfo, application_name};
  const sys::MonoNs now = sys::mono_now_ns();
  // Connecting is an operation like any other (kLockWaitMs), and a caller's
  // tighter instant wins: a server that accepts TCP and never answers costs
  // no more than that.
  const sys::MonoNs operation = sys::mono_after_ms(now, kLockWaitMs);
  const sys::MonoNs connect = connect_until > 0 ? std::min<sys::MonoNs>(connect_until, operation) : operation;
  auto c = pg::Connection::open(options, connect);
  if (!c) return tl::unexpected(c.error());
  if (auto schema = pg::migrate(*c, sys::mono_after_ms(now, kSchemaOpenMs)); !schema) {
    return tl::unexpected(schema.error());
  }
  return std::unique_ptr<Journal>(std::make_unique<PgJournal>(std::move(options), std::move(*c), url.redacted));
}

Result<std::unique_ptr<Journal>> open_state(const state::StateUrl& url, const std::string& application_name,
                                            std::int64_t connect_until) {
  if (url.kind == state::StateUrl::Kind::sqlite) return open_sqlite(url.path);
  return open_postgres(url, application_name, connect_until);
}

}  // namespace courier::journal
