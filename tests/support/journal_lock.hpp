// journal_lock.hpp — a stuck writer of a SQLite journal, for the tests of
// what the product does when the journal's lock is held past its bound.
#pragma once

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>

namespace courier::test {

// Another connection holding the journal's write lock (BEGIN EXCLUSIVE)
// from construction to destruction, as a stuck process would.
class HeldJournalLock {
 public:
  explicit HeldJournalLock(const std::string& path) {
    REQUIRE(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db_, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  ~HeldJournalLock() {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
  }
  HeldJournalLock(const HeldJournalLock&) = delete;
  HeldJournalLock& operator=(const HeldJournalLock&) = delete;

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace courier::test
