// journal_store.cpp — submit() and append() once for every backend: read the
// row, ask the rules, write, all in one transaction.
#include "journal/journal_store.hpp"

#include "journal/step_hook.hpp"

namespace courier::journal {

tl::unexpected<Error> JournalStore::refused(const Error& e) const {
  return fail(e.code, "journal " + where() + ": " + e.message);
}

std::optional<RowState> JournalStore::state_of(const std::optional<Row>& row) {
  if (!row) return std::nullopt;
  return row_state(row->attempt, row->finished, row->latest);
}

// Each write passes its crash points (journal/step_hook.hpp): before the
// transaction, and after it committed. A refused or failed write has no
// `after`: nothing of it is in the journal.
Result<void> JournalStore::submit(const Submission& s, std::int64_t at_unix_ms) {
  at_step(Step::submitted, StepEdge::before);
  auto done = write_transaction(true, [&]() -> Result<void> {
    auto row = read_row(s.id);
    if (!row) return tl::unexpected(row.error());
    if (auto ok = may_submit(s.id, state_of(*row), s.attempt); !ok) return refused(ok.error());
    if (auto wrote = write_row(s, at_unix_ms, !*row); !wrote) return wrote;
    return append_entry(s.id, Entry{Step::submitted, s.attempt, at_unix_ms, submission_detail(s)});
  });
  if (done) at_step(Step::submitted, StepEdge::after);
  return done;
}

Result<void> JournalStore::append(const std::string& id, const Entry& e, bool durable) {
  at_step(e.step, StepEdge::before);
  auto done = write_transaction(durable, [&]() -> Result<void> {
    auto row = read_row(id);
    if (!row) return tl::unexpected(row.error());
    if (auto ok = may_append(id, state_of(*row), e); !ok) return refused(ok.error());
    if (auto wrote = append_entry(id, e); !wrote) return wrote;
    if (e.step != Step::finished) return {};
    return close_row(id, e.detail);
  });
  if (done) at_step(e.step, StepEdge::after);
  return done;
}

}  // namespace courier::journal
