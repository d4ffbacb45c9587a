// sqlite_journal.cpp — the delivery journal in one SQLite file (WAL mode): the
// default backend of journal.hpp, a store (journal_store.hpp) under the one
// rule set (journal_rules.hpp): it reads and writes, it decides nothing.
//
// Durability (J1). The file is in WAL mode. Ordinary appends commit with
// synchronous=NORMAL: the commit is written to the WAL (the kernel's page
// cache) and not synced, so it survives a crash of this process, not a
// power cut. A durable write (submit, and append with durable=true) runs
// its one transaction with synchronous=FULL: the WAL is fsync'ed at its
// commit, and with it every earlier entry (a durable entry never has a hole
// before it on disk). The alternative, a NORMAL commit followed by
// `PRAGMA wal_checkpoint`, syncs the WAL *and* the database file, copies
// pages, and can be held up by readers.
// Measured on this project's 2-core VM (virtio disk), medians of 50
// (tests/unit/journal.cpp prints its figure on every run): ordinary append
// 0.05 ms; durable append 0.5-0.7 ms with the disk idle, about 4 ms while
// another build writes to the same disk; commit + wal_checkpoint(FULL)
// 1.7 ms idle, 12 ms busy. Hence FULL for the durable transaction only.
//
// Every SQLite error becomes journal_failed in one place (sqlite_failure),
// naming the file and SQLite's own words.
#include <sqlite3.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>

#include "journal/journal_store.hpp"
#include "sys/lazy_library.hpp"
#include "sys/private_dir.hpp"

namespace courier::journal {

namespace {

// Version 2 added deliveries.request (the set of ref updates, J4); a
// version 1 journal is migrated when opened for writing, and read as it is
// (every row one update) when opened read-only.
constexpr int kSchemaVersion = 2;
constexpr unsigned kFileMode = 0600;  // SQLite gives -wal and -shm the main file's mode

// Fixed text only (no data): every statement that carries data is prepared
// and bound (Stmt).
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS deliveries (
  id TEXT PRIMARY KEY,
  attempt INTEGER NOT NULL,
  repo TEXT NOT NULL,
  remote TEXT NOT NULL,
  lane TEXT NOT NULL,
  ref TEXT NOT NULL,
  oid TEXT NOT NULL,
  expect_old TEXT,
  deadline_unix_ms INTEGER NOT NULL,
  submitter_pid INTEGER NOT NULL,
  submitter_start_ticks INTEGER NOT NULL,
  submitter_boot_id TEXT NOT NULL,
  submitted_unix_ms INTEGER NOT NULL,
  finished INTEGER NOT NULL DEFAULT 0, -- the current attempt has its finished entry
  outcome TEXT,                        -- the latest finished entry's detail (any attempt), or null
  request TEXT                         -- the set of ref updates (request_detail), or null: written before sets
);
CREATE TABLE IF NOT EXISTS entries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  step TEXT NOT NULL,
  at_unix_ms INTEGER NOT NULL,
  detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_id ON entries(id);
)sql";

// The one place a SQLite error becomes an Error: SQLite's own words, and
// what they mean for a journal where they are not plain.
Error sqlite_failure(const std::string& path, sqlite3* db, int rc) {
  std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (rc == SQLITE_READONLY_DIRECTORY) {
    why += " (its directory is read-only: WAL mode must create " + path + "-wal and -shm beside it)";
  } else if ((rc & 0xff) == SQLITE_READONLY) {
    why += " (this user cannot write the file or its directory)";
  } else if ((rc & 0xff) == SQLITE_BUSY) {
    why += " (held by another connection for more than " + std::to_string(kLockWaitMs) + " ms)";
  } else if ((rc & 0xff) == SQLITE_CANTOPEN) {
    why += " (WAL mode creates " + path + "-wal and " + path + "-shm beside it: is its directory writable?)";
  }
  return Error{Errc::journal_failed, "journal " + path + ": " + why};
}

tl::unexpected<Error> journal_failure(const std::string& path, const std::string& why) {
  return fail(Errc::journal_failed, "journal " + path + ": " + why);
}

class Connection;

// One prepared statement; text it binds is kept alive with it.
class Stmt {
 public:
  Stmt(const Connection& c, sqlite3_stmt* s) : conn_(&c), stmt_(s, sqlite3_finalize) {}
  Stmt& arg(std::string_view v) {
    if (v.size() > static_cast<std::size_t>(INT_MAX)) return keep(SQLITE_TOOBIG);
    const std::string& kept = texts_.emplace_back(v);
    return keep(sqlite3_bind_text(stmt_.get(), next_++, kept.data(), static_cast<int>(kept.size()), nullptr));
  }
  Stmt& arg(const std::string& v) { return arg(std::string_view(v)); }
  Stmt& arg(const std::optional<std::string>& v) {
    if (v) return arg(std::string_view(*v));
    return keep(sqlite3_bind_null(stmt_.get(), next_++));
  }
  Stmt& arg(std::int64_t v) { return keep(sqlite3_bind_int64(stmt_.get(), next_++, v)); }
  // A row (true) or the end (false).
  Result<bool> next();
  // Runs a statement that returns no rows.
  Result<void> run() {
    auto r = next();
    if (!r) return tl::unexpected(r.error());
    return {};
  }
  std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), col));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), col))) : std::string();
  }
  std::optional<std::string> opt_text(int col) const {
    if (sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL) return std::nullopt;
    return text(col);
  }
  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_.get(), col); }

 private:
  Stmt& keep(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    return *this;
  }
  const Connection* conn_;
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt_;
  std::deque<std::string> texts_;
  int next_ = 1;
  int bind_rc_ = SQLITE_OK;
};

// The open database handle and the journal's path, for messages.
class Connection {
 public:
  Connection(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  ~Connection() { sqlite3_close_v2(db_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const std::string& path() const { return path_; }
  sqlite3* db() const { return db_; }
  Error failure(int rc) const { return sqlite_failure(path_, db_, rc); }

  // Fixed statements (BEGIN, COMMIT, PRAGMA, the schema): no data in them.
  Result<void> exec(const char* sql) const {
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return tl::unexpected(failure(rc));
    return {};
  }
  Result<Stmt> prepare(const char* sql) const {
    sqlite3_stmt* s = nullptr;
    const int rc = sqlite3_prepare_v2(db_, sql, -1, &s, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(s);
      return tl::unexpected(failure(rc));
    }
    return Stmt(*this, s);
  }

 private:
  std::string path_;
  sqlite3* db_;
};

Result<bool> Stmt::next() {
  if (bind_rc_ != SQLITE_OK) return tl::unexpected(conn_->failure(bind_rc_));
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return tl::unexpected(conn_->failure(rc));
}

enum class Txn { read, write, durable };

class SqliteJournal final : public JournalStore {
 public:
  explicit SqliteJournal(std::unique_ptr<Connection> c) : conn_(std::move(c)) {}

  const std::string& where() const override { return conn_->path(); }
  Result<std::optional<Record>> find(const std::string& id) override;
  Result<std::vector<Record>> recent(std::size_t limit) override;
  Result<std::vector<Record>> open_work() override;

  // The schema, created when absent (read_only: refused when absent); a
  // version other than ours is refused.
  Result<void> ensure_schema(bool read_only = false);

 private:
  Result<void> migrate_to_sets();
  int version_ = kSchemaVersion;  // the file's schema (1: read-only, not migrated)
  // Runs body in one transaction under mu_ (two threads' BEGIN..COMMIT never
  // interleave on the connection); commits when it succeeds, rolls back
  // otherwise.
  Result<void> transaction(Txn kind, const std::function<Result<void>()>& body);
  Result<void> finish_transaction(Result<void> r);
  // The store (journal_store.hpp): BEGIN IMMEDIATE takes the write lock
  // first, so the row read stays as read until the commit.
  Result<void> write_transaction(bool durable, const std::function<Result<void>()>& body) override {
    return transaction(durable ? Txn::durable : Txn::write, body);
  }
  Result<std::optional<Row>> read_row(const std::string& id) override;
  Result<void> write_row(const Submission& s, std::int64_t at_unix_ms, bool insert) override;
  Result<void> close_row(const std::string& id, const std::string& outcome_detail) override;
  Result<void> append_entry(const std::string& id, const Entry& e) override;
  Result<std::optional<Record>> load(const std::string& id) const;
  // The delivery's entries, oldest first: every attempt's, or one's.
  Result<std::vector<Entry>> load_entries(const std::string& id, std::optional<int> attempt = std::nullopt) const;
  Result<std::vector<Record>> load_all(Stmt& ids) const;

  std::unique_ptr<Connection> conn_;
  std::mutex mu_;
};

Result<void> SqliteJournal::transaction(Txn kind, const std::function<Result<void>()>& body) {
  std::lock_guard lock(mu_);
  if (kind == Txn::durable) {
    if (auto full = conn_->exec("PRAGMA synchronous=FULL"); !full) return full;
  }
  Result<void> r = conn_->exec(kind == Txn::read ? "BEGIN" : "BEGIN IMMEDIATE");
  if (r) r = body();
  r = finish_transaction(std::move(r));
  if (kind == Txn::durable) {
    // Failing to step back only costs speed (every commit synced); the
    // next durable transaction tries again.
    (void)conn_->exec("PRAGMA synchronous=NORMAL");
  }
  return r;
}

Result<void> SqliteJournal::finish_transaction(Result<void> r) {
  if (r) r = conn_->exec("COMMIT");
  // Whatever failed (the body, the commit): the transaction must not stay open.
  if (!sqlite3_get_autocommit(conn_->db())) (void)conn_->exec("ROLLBACK");
  return r;
}

Result<std::optional<JournalStore::Row>> SqliteJournal::read_row(const std::string& id) {
  auto q = conn_->prepare("SELECT attempt, finished FROM deliveries WHERE id = ?1");
  if (!q) return tl::unexpected(q.error());
  auto found = q->arg(id).next();
  if (!found) return tl::unexpected(found.error());
  if (!*found) return std::optional<Row>();
  Row row{static_cast<int>(q->integer(0)), q->integer(1) != 0, {}};
  auto latest = load_entries(id, row.attempt);
  if (!latest) return tl::unexpected(latest.error());
  row.latest = std::move(*latest);
  return std::optional<Row>(std::move(row));
}

Result<void> SqliteJournal::append_entry(const std::string& id, const Entry& e) {
  auto q = conn_->prepare("INSERT INTO entries (id, attempt, step, at_unix_ms, detail) VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!q) return tl::unexpected(q.error());
  return q->arg(id)
      .arg(std::int64_t{e.attempt})
      .arg(std::string_view(step_name(e.step)))
      .arg(e.at_unix_ms)
      .arg(e.detail)
      .run();
}

Result<void> SqliteJournal::write_row(const Submission& s, std::int64_t at_unix_ms, bool insert) {
  // One parameter order for both: ?1 is the id.
  auto q = conn_->prepare(
      insert ? "INSERT INTO deliveries (id, attempt, repo, remote, lane, ref, oid, expect_old, deadline_unix_ms,"
               " submitter_pid, submitter_start_ticks, submitter_boot_id, submitted_unix_ms, request, finished)"
               " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, 0)"
             : "UPDATE deliveries SET attempt = ?2, repo = ?3, remote = ?4, lane = ?5, ref = ?6, oid = ?7,"
               " expect_old = ?8, deadline_unix_ms = ?9, submitter_pid = ?10, submitter_start_ticks = ?11,"
               " submitter_boot_id = ?12, submitted_unix_ms = ?13, request = ?14, finished = 0 WHERE id = ?1");
  if (!q) return tl::unexpected(q.error());
  q->arg(s.id).arg(std::int64_t{s.attempt}).arg(s.repo).arg(s.remote).arg(s.lane).arg(s.ref).arg(s.oid);
  q->arg(s.expect_old).arg(s.deadline_unix_ms).arg(s.submitter.pid);
  q->arg(static_cast<std::int64_t>(s.submitter.start_ticks)).arg(s.submitter.boot_id).arg(at_unix_ms);
  q->arg(request_detail(s));
  return q->run();
}

Result<void> SqliteJournal::close_row(const std::string& id, const std::string& outcome_detail) {
  auto q = conn_->prepare("UPDATE deliveries SET finished = 1, outcome = ?2 WHERE id = ?1");
  if (!q) return tl::unexpected(q.error());
  return q->arg(id).arg(outcome_detail).run();
}

Result<std::vector<Entry>> SqliteJournal::load_entries(const std::string& id, std::optional<int> attempt) const {
  auto q = conn_->prepare(
      "SELECT step, attempt, at_unix_ms, detail FROM entries WHERE id = ?1 AND (?2 IS NULL OR attempt = ?2)"
      " ORDER BY seq");
  if (!q) return tl::unexpected(q.error());
  q->arg(id);
  if (attempt) {
    q->arg(std::int64_t{*attempt});
  } else {
    q->arg(std::optional<std::string>());
  }
  std::vector<Entry> out;
  for (;;) {
    auto row = q->next();
    if (!row) return tl::unexpected(row.error());
    if (!*row) return out;
    const auto step = step_from_name(q->text(0));
    if (!step) return journal_failure(where(), "delivery " + id + " has an entry of unknown step '" + q->text(0) + "'");
    out.push_back(Entry{*step, static_cast<int>(q->integer(1)), q->integer(2), q->text(3)});
  }
}

Result<std::optional<Record>> SqliteJournal::load(const std::string& id) const {
  // A version 1 journal read as it is has no request column: every row is
  // one update.
  auto q = conn_->prepare(version_ == 1 ? "SELECT attempt, repo, remote, lane, ref, oid, expect_old, deadline_unix_ms,"
                                          " submitter_pid, submitter_start_ticks, submitter_boot_id, finished, NULL"
                                          " FROM deliveries WHERE id = ?1"
                                        : "SELECT attempt, repo, remote, lane, ref, oid, expect_old, deadline_unix_ms,"
                                          " submitter_pid, submitter_start_ticks, submitter_boot_id, finished, request"
                                          " FROM deliveries WHERE id = ?1");
  if (!q) return tl::unexpected(q.error());
  auto row = q->arg(id).next();
  if (!row) return tl::unexpected(row.error());
  if (!*row) return std::optional<Record>();
  Record r;
  Submission& s = r.submission;
  s.id = id;
  s.attempt = static_cast<int>(q->integer(0));
  s.repo = q->text(1);
  s.remote = q->text(2);
  s.lane = q->text(3);
  s.ref = q->text(4);
  s.oid = q->text(5);
  s.expect_old = q->opt_text(6);
  s.deadline_unix_ms = q->integer(7);
  s.submitter = ProcessIdentity{q->integer(8), static_cast<std::uint64_t>(q->integer(9)), q->text(10)};
  r.finished = q->integer(11) != 0;
  read_request(q->opt_text(12), s);
  auto entries = load_entries(id);
  if (!entries) return tl::unexpected(entries.error());
  r.entries = std::move(*entries);
  // The note lives in the current attempt's submitted entry only (a
  // journal written before notes existed simply has none): no column,
  // no schema change.
  if (auto submitted = r.last(Step::submitted)) {
    s.note = note_of_detail(submitted->detail);
    s.host = detail_text(submitted->detail, "host");
  }
  return std::optional<Record>(std::move(r));
}

Result<std::vector<Record>> SqliteJournal::load_all(Stmt& ids) const {
  std::vector<Record> out;
  for (;;) {
    auto row = ids.next();
    if (!row) return tl::unexpected(row.error());
    if (!*row) return out;
    auto r = load(ids.text(0));
    if (!r) return tl::unexpected(r.error());
    if (*r) out.push_back(std::move(**r));
  }
}

Result<std::optional<Record>> SqliteJournal::find(const std::string& id) {
  std::optional<Record> out;
  auto done = transaction(Txn::read, [&]() -> Result<void> {
    auto r = load(id);
    if (!r) return tl::unexpected(r.error());
    out = std::move(*r);
    return {};
  });
  if (!done) return tl::unexpected(done.error());
  return out;
}

Result<std::vector<Record>> SqliteJournal::recent(std::size_t limit) {
  std::vector<Record> out;
  const auto n = static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX));
  auto done = transaction(Txn::read, [&]() -> Result<void> {
    // Newest first; within one millisecond, the later `submitted` entry first.
    auto q = conn_->prepare(
        "SELECT id FROM deliveries d ORDER BY submitted_unix_ms DESC,"
        " (SELECT MAX(seq) FROM entries e WHERE e.id = d.id AND e.step = 'submitted') DESC LIMIT ?1");
    if (!q) return tl::unexpected(q.error());
    auto all = load_all(q->arg(n));
    if (!all) return tl::unexpected(all.error());
    out = std::move(*all);
    return {};
  });
  if (!done) return tl::unexpected(done.error());
  return out;
}

// The kinds is_unconfirmed() names, as a JSON array for json_each(): the
// query asks the outcome table, it does not keep a list of its own.
std::string unconfirmed_kinds() {
  std::string out;
  for (const auto& row : kOutcomeRows) {
    if (row.seat == SeatDisposition::retain) out += (out.empty() ? "\"" : ",\"") + std::string(row.word) + "\"";
  }
  return "[" + out + "]";
}

Result<std::vector<Record>> SqliteJournal::open_work() {
  std::vector<Record> out;
  auto done = transaction(Txn::read, [&]() -> Result<void> {
    // Oldest first: every unfinished row, and every finished one whose
    // outcome is unconfirmed (or cannot be read: nothing says its stop was
    // confirmed) and whose current attempt has no stop_confirmed.
    auto q = conn_->prepare(
        "SELECT id FROM deliveries d WHERE finished = 0 OR ("
        " CASE WHEN d.outcome IS NOT NULL AND json_valid(d.outcome)"
        "   THEN coalesce(json_extract(d.outcome, '$.kind') IN (SELECT value FROM json_each(?1)), 1) ELSE 1 END"
        " AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.id = d.id AND e.attempt = d.attempt"
        "   AND e.step = 'stop_confirmed')) ORDER BY submitted_unix_ms, id");
    if (!q) return tl::unexpected(q.error());
    auto all = load_all(q->arg(unconfirmed_kinds()));
    if (!all) return tl::unexpected(all.error());
    out = std::move(*all);
    return {};
  });
  if (!done) return tl::unexpected(done.error());
  return out;
}

Result<void> SqliteJournal::ensure_schema(bool read_only) {
  auto has_tables = [&]() -> Result<bool> {
    auto q = conn_->prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
    if (!q) return tl::unexpected(q.error());
    return q->next();
  };
  auto present = has_tables();
  if (!present) return tl::unexpected(present.error());
  if (!*present && read_only) return journal_failure(where(), "is not a git-courier journal (it has no schema)");
  if (!*present) {
    auto made = transaction(Txn::durable, [&]() -> Result<void> {
      if (auto ddl = conn_->exec(kSchema); !ddl) return ddl;
      auto q = conn_->prepare(
          "INSERT INTO schema_version (version) SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM schema_version)");
      if (!q) return tl::unexpected(q.error());
      return q->arg(std::int64_t{kSchemaVersion}).run();
    });
    if (!made) return made;
  }
  auto q = conn_->prepare("SELECT version FROM schema_version");
  if (!q) return tl::unexpected(q.error());
  auto row = q->next();
  if (!row) return tl::unexpected(row.error());
  if (!*row || (q->integer(0) != kSchemaVersion && q->integer(0) != 1)) {
    return journal_failure(where(), "schema version " + (*row ? std::to_string(q->integer(0)) : std::string("none")) +
                                        ", this program knows version " + std::to_string(kSchemaVersion));
  }
  version_ = static_cast<int>(q->integer(0));
  if (version_ == 1 && !read_only) return migrate_to_sets();
  return {};
}

// Version 1 to 2: the set of ref updates (null in every older row: each
// reads as its one update).
Result<void> SqliteJournal::migrate_to_sets() {
  auto done = transaction(Txn::durable, [&]() -> Result<void> {
    // Another process may have migrated it since it was read: the write
    // lock is held from here.
    auto current = [&]() -> Result<std::int64_t> {
      auto q = conn_->prepare("SELECT version FROM schema_version");
      if (!q) return tl::unexpected(q.error());
      auto row = q->next();
      if (!row) return tl::unexpected(row.error());
      return *row ? q->integer(0) : 0;
    }();
    if (!current) return tl::unexpected(current.error());
    if (*current == kSchemaVersion) return {};
    if (auto ddl = conn_->exec("ALTER TABLE deliveries ADD COLUMN request TEXT"); !ddl) return ddl;
    return conn_->exec("UPDATE schema_version SET version = 2");
  });
  if (!done) return done;
  version_ = kSchemaVersion;
  return {};
}

// The directory verified (created 0700 when missing) and the file ensured
// ours (created 0600), before SQLite opens it by name without following a link.
Result<void> prepare_file(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty()) return journal_failure(path, "names a directory, not a file");
  auto d = sys::open_private_dir(dir);
  if (!d) return journal_failure(path, d.error().message);
  auto f = sys::ensure_private_file(*d, name, kFileMode);
  if (!f) return journal_failure(path, f.error().message);
  return {};
}

// A connection to the file at `path`, which SQLite never creates: read-write
// (then set up for the journal's writes), or read-only for `log` and `show`.
Result<std::unique_ptr<Connection>> open_connection(const std::string& path, bool read_only) {
  sqlite3* db = nullptr;
  const int flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOFOLLOW |
                    SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_EXRESCODE;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  auto c = std::make_unique<Connection>(path, db);  // closes db, even a failed one
  if (rc != SQLITE_OK) return tl::unexpected(c->failure(rc));
  if (sqlite3_busy_timeout(db, static_cast<int>(kLockWaitMs)) != SQLITE_OK) {
    return tl::unexpected(c->failure(sqlite3_errcode(db)));
  }
  return c;
}

Result<std::unique_ptr<Connection>> connect(const std::string& path) {
  auto opened = open_connection(path, false);
  if (!opened) return opened;
  auto c = std::move(*opened);
  sqlite3* db = c->db();
  // SQLite falls back to reading when the file cannot be written: say so now,
  // not at the first write.
  if (sqlite3_db_readonly(db, "main") == 1) return tl::unexpected(sqlite_failure(path, nullptr, SQLITE_READONLY));
  auto mode = c->prepare("PRAGMA journal_mode=WAL");
  if (!mode) return tl::unexpected(mode.error());
  auto row = mode->next();
  if (!row) return tl::unexpected(row.error());
  if (!*row || mode->text(0) != "wal") {
    return journal_failure(path, "cannot use WAL mode (journal mode is '" + (*row ? mode->text(0) : "") + "')");
  }
  if (auto sync = c->exec("PRAGMA synchronous=NORMAL"); !sync) return tl::unexpected(sync.error());
  // The WAL stays between connections, and closing does not checkpoint: a
  // command that opens the journal for one delivery would otherwise pay, at
  // its end, a checkpoint that syncs the database file, and at its start the
  // creation of a new WAL (which syncs the directory too). The WAL is
  // checkpointed as it grows (SQLite's automatic checkpoint, at 1000 pages).
  int on = 1;
  if (sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr) != SQLITE_OK ||
      sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &on) != SQLITE_OK) {
    return journal_failure(path, "cannot keep the WAL between connections");
  }
  return c;
}

}  // namespace

Result<std::unique_ptr<Journal>> open_sqlite(const std::string& path) {
  if (path.empty()) return fail(Errc::journal_failed, "the journal path is empty");
  if (auto lib = sys::load_shared_library(sys::SharedLibrary::sqlite3); !lib) {
    return fail(Errc::journal_failed, lib.error().message);
  }
  if (auto ready = prepare_file(path); !ready) return tl::unexpected(ready.error());
  auto c = connect(path);
  if (!c) return tl::unexpected(c.error());
  auto j = std::make_unique<SqliteJournal>(std::move(*c));
  if (auto schema = j->ensure_schema(); !schema) return tl::unexpected(schema.error());
  return std::unique_ptr<Journal>(std::move(j));
}

Result<std::unique_ptr<Journal>> open_sqlite_read_only(const std::string& path) {
  if (path.empty()) return fail(Errc::journal_failed, "the journal path is empty");
  if (auto lib = sys::load_shared_library(sys::SharedLibrary::sqlite3); !lib) {
    return fail(Errc::journal_failed, lib.error().message);
  }
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(path, ec);
  if (!std::filesystem::exists(st)) {
    return journal_failure(path,
                           "does not exist: nothing was journalled there (log and show never create a journal; "
                           "give --journal the file push or serve wrote)");
  }
  if (!std::filesystem::is_regular_file(st)) return journal_failure(path, "is not a regular file");
  auto c = open_connection(path, true);
  if (!c) return tl::unexpected(c.error());
  auto j = std::make_unique<SqliteJournal>(std::move(*c));
  if (auto schema = j->ensure_schema(true); !schema) return tl::unexpected(schema.error());
  return std::unique_ptr<Journal>(std::move(j));
}

}  // namespace courier::journal
