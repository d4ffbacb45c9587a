// journal_store.hpp — a journal as a store under the one rule set: submit()
// and append() written once, over a backend that only reads and writes.
//
// A backend (SQLite, PostgreSQL) is reduced to a store: a write transaction,
// and inside it reading a delivery's row, writing it, and appending an
// entry. What is accepted is decided by journal_rules.hpp, asked here inside
// the transaction that writes, so no other writer can change the row
// between the question and the write. The reads (find, recent, open_work)
// stay the backend's own: they decide nothing.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "journal/journal.hpp"
#include "journal/journal_rules.hpp"

namespace courier::journal {

class JournalStore : public Journal {
 public:
  // Both ask the rules (may_submit, may_append) and write only what they accept.
  Result<void> submit(const Submission& s, std::int64_t at_unix_ms) final;
  Result<void> append(const std::string& id, const Entry& e, bool durable) final;

 protected:
  // A delivery's row as a store reads it: its latest attempt, whether that
  // attempt is finished, and that attempt's entries, oldest first.
  struct Row {
    int attempt = 0;
    bool finished = false;
    std::vector<Entry> latest;
  };

  // Runs body as one write transaction in which the row it reads stays as
  // read until the commit (no other writer of it meanwhile); commits when
  // body succeeds, rolls back otherwise. durable: synced at its commit (J1).
  virtual Result<void> write_transaction(bool durable, const std::function<Result<void>()>& body) = 0;
  // Inside write_transaction only. The row, or nullopt for an unknown id.
  virtual Result<std::optional<Row>> read_row(const std::string& id) = 0;
  // Writes the row for a submission's attempt: a new row (insert), or the
  // row of the attempt before it, now unfinished again.
  virtual Result<void> write_row(const Submission& s, std::int64_t at_unix_ms, bool insert) = 0;
  // Marks the row's attempt finished with this outcome (a finished entry's detail).
  virtual Result<void> close_row(const std::string& id, const std::string& outcome_detail) = 0;
  virtual Result<void> append_entry(const std::string& id, const Entry& e) = 0;

  // An error of the rules, as this journal says it (where it is named).
  tl::unexpected<Error> refused(const Error& e) const;

 private:
  static std::optional<RowState> state_of(const std::optional<Row>& row);
};

}  // namespace courier::journal
