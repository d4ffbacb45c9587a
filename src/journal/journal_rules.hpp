// journal_rules.hpp — what the journal accepts (J1, J3, J4, J5): one rule set,
// pure, that every store asks inside the transaction that writes.
//
// A store (journal_store.hpp) reads the delivery's row and its latest
// attempt's entries, asks these rules whether the submission or the entry
// is accepted, and writes it only when it is: the rules are written once,
// here, and both backends (SQLite, PostgreSQL) keep them alike by asking.
// Nothing here does I/O; every answer follows from its arguments.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "courier/outcome.hpp"
#include "courier/result.hpp"
#include "journal/journal.hpp"

namespace courier::journal {

// A cancellation by the caller or by authority that the latest attempt
// journalled (a revoke_requested entry whose cause is final, J5).
struct FinalCancellation {
  RevokeCause by = RevokeCause::caller;
  // Journalled as won before the dispatch claim (its detail says
  // "claimed": false): no child existed, and none may be recorded.
  bool before_claim = false;
};

// A delivery's row as the rules read it.
struct RowState {
  int attempt = 0;        // the latest attempt
  bool finished = false;  // the latest attempt has its finished entry
  // That finished entry's outcome, nullopt when unfinished or unreadable.
  std::optional<OutcomeKind> outcome;
  bool stop_confirmed = false;  // the latest attempt has a stop_confirmed entry
  std::optional<FinalCancellation> cancelled;
};

// The row state from what a store reads: the row's latest attempt and its
// finished flag, and that attempt's entries, oldest first.
RowState row_state(int attempt, bool finished, const std::vector<Entry>& latest);

// The final cancellation a revoke_requested entry journals, or nullopt when
// its cause (shutdown, a lost lease) is not final. The cause is read as the
// id table reads it (revoke_cause_in): a journal written before causes were
// named gives its words.
std::optional<FinalCancellation> final_cancellation(const Entry& revoke_requested);

// Whether `attempt` of delivery `id` may be submitted; `row` is nullopt for
// an id never submitted. Accepted: attempt 1 of a new id, or the attempt
// after a finished one that was not cancelled for good.
// Errors: journal_conflict (why), journal_failed (no id).
Result<void> may_submit(const std::string& id, const std::optional<RowState>& row, int attempt);

// Whether entry `e` may be appended to delivery `id`. Accepted: an entry of
// the latest attempt before its finished entry (one finished entry closes
// it); after it, one stop_confirmed for an outcome that retained its seat;
// after a final cancellation, no step of a dispatch (claimed, dispatched,
// advertised, post_started, answered) when it won before the claim, and no
// post_started after one of a live delivery.
// Errors: journal_conflict (why; a submitted entry too: submit() writes
// it), journal_failed (the id unknown, a finished entry with no outcome).
Result<void> may_append(const std::string& id, const std::optional<RowState>& row, const Entry& e);

}  // namespace courier::journal
