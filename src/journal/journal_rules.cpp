// journal_rules.cpp — what the journal accepts: attempts in order, nothing after
// `finished` but a retained stop's confirmation, and a cancellation by the
// caller or authority final (J1, J3, J4, J5). Pure: no I/O.
#include "journal/journal_rules.hpp"

namespace courier::journal {

namespace {

tl::unexpected<Error> conflict(std::string why) { return fail(Errc::journal_conflict, std::move(why)); }

std::string attempt_of(const std::string& id, int attempt) {
  return "delivery " + id + " attempt " + std::to_string(attempt);
}

// The steps only a dispatched child (or the claim that may make one) gives.
bool is_dispatch_step(Step s) {
  return s == Step::claimed || s == Step::dispatched || s == Step::advertised || s == Step::post_started ||
         s == Step::answered;
}

// J5: after a journalled cancellation by the caller or authority. Won
// before the claim: nothing of a dispatch may follow (another process's or
// host's claim of the same id loses to it). Won while live: the claim and
// the child are facts that may still be recorded (recovery identifies the
// child by its dispatched entry, J3), but the POST may not begin.
Result<void> after_cancellation(const std::string& which, const FinalCancellation& c, Step s) {
  const std::string by = revoke_cause_name(c.by);
  if (c.before_claim && is_dispatch_step(s)) {
    return conflict(std::string(step_name(s)) + " refused: " + which + " was cancelled by " + by +
                    " before its dispatch claim, and a cancellation is final");
  }
  if (s == Step::post_started) {
    return conflict(std::string(step_name(s)) + " refused: " + which + " was cancelled by " + by +
                    ", and a cancellation is final: no POST begins after it");
  }
  return {};
}

// J3: a stop_confirmed entry, once, for an outcome that retained its seat
// (or one nobody can read: nothing says its stop was confirmed).
Result<void> confirm_stop(const std::string& which, const RowState& row) {
  if (!row.finished) return conflict(which + " is not finished: there is no retained stop to confirm");
  if (row.outcome && !is_unconfirmed(*row.outcome)) {
    return conflict(which + " ended " + outcome_name(*row.outcome) +
                    ", its stop confirmed: there is no retained stop to confirm");
  }
  if (row.stop_confirmed) return conflict(which + ": its stop was already confirmed");
  return {};
}

}  // namespace

std::optional<FinalCancellation> final_cancellation(const Entry& revoke_requested) {
  const std::string name = detail_text(revoke_requested.detail, "cause");
  const std::string words = detail_text(revoke_requested.detail, "reason");
  const RevokeCause by = revoke_cause_in(name, words.empty() ? name : words);
  if (!revocation_is_final(by)) return std::nullopt;
  return FinalCancellation{by, detail_flag(revoke_requested.detail, "claimed") == std::optional<bool>(false)};
}

RowState row_state(int attempt, bool finished, const std::vector<Entry>& latest) {
  RowState row;
  row.attempt = attempt;
  row.finished = finished;
  for (const Entry& e : latest) {
    if (e.attempt != attempt) continue;
    if (e.step == Step::stop_confirmed) row.stop_confirmed = true;
    if (e.step == Step::finished) {
      auto o = outcome_from_detail(e.detail);
      row.outcome = o ? std::optional<OutcomeKind>(o->kind) : std::nullopt;
    }
    if (e.step == Step::revoke_requested && !row.cancelled) row.cancelled = final_cancellation(e);
  }
  return row;
}

Result<void> may_submit(const std::string& id, const std::optional<RowState>& row, int attempt) {
  if (id.empty()) return fail(Errc::journal_failed, "a delivery without an id cannot be recorded");
  if (!row) {
    if (attempt == 1) return {};
    return conflict("delivery " + id + " was never submitted, so attempt " + std::to_string(attempt) +
                    " cannot be its next one");
  }
  if (!row->finished || attempt != row->attempt + 1) {
    return conflict("delivery " + id + " already has attempt " + std::to_string(row->attempt) + ", " +
                    (row->finished ? "finished" : "not finished") + ": attempt " + std::to_string(attempt) +
                    " is refused (submitted by another process or host too?)");
  }
  // J4, J5: the id table replays a cancellation by the caller or authority
  // (or refuses it while its stop is unconfirmed), never runs it again.
  if (row->cancelled) {
    return conflict(attempt_of(id, row->attempt) + " was cancelled by " + revoke_cause_name(row->cancelled->by) +
                    ", and a cancellation is final: attempt " + std::to_string(attempt) +
                    " is refused (a new delivery needs a new id)");
  }
  return {};
}

Result<void> may_append(const std::string& id, const std::optional<RowState>& row, const Entry& e) {
  if (e.step == Step::submitted) return conflict("a submitted entry for " + id + " is written by submit() only");
  if (e.step == Step::finished) {
    // open_work and the id table read the outcome's kind.
    if (auto o = outcome_from_detail(e.detail); !o) return fail(Errc::journal_failed, id + ": " + o.error().message);
  }
  if (!row) return fail(Errc::journal_failed, "no delivery " + id + " was submitted");
  const std::string which = attempt_of(id, e.attempt);
  if (e.attempt != row->attempt) {
    return conflict(std::string(step_name(e.step)) + " for " + which + ", but its current attempt is " +
                    std::to_string(row->attempt));
  }
  if (e.step == Step::stop_confirmed) return confirm_stop(which, *row);
  // One finished entry per attempt: the process that ran it and a recovery
  // never both finish it (J3).
  if (row->finished) return conflict(std::string(step_name(e.step)) + " refused: " + which + " is already finished");
  if (row->cancelled) return after_cancellation(which, *row->cancelled, e.step);
  return {};
}

}  // namespace courier::journal
