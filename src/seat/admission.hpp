// admission.hpp — a delivery's entry into the journal (J1, J4): the
// decision whether an id runs, replays its recorded outcome, runs again as a
// compare-and-swap, or is refused; and the durable `submitted` that must
// precede any dispatch.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "courier/outcome.hpp"
#include "journal/journal.hpp"

namespace courier::seat {

struct Admission {
  enum class Verdict {
    run,     // journalled (durable); go on
    replay,  // the id already finished: `recorded` is its outcome, nothing is sent
    refuse,  // refused before dispatch: `why`
  };
  Verdict verdict = Verdict::refuse;
  std::string why;
  Outcome recorded;  // replay
  int attempt = 1;   // run: this attempt's number
  // run, attempt > 1: the compare-and-swap on the old ids the journal
  // recorded for the attempt that may have been applied (J4): each ref whose
  // command was sent, by ref, with its recorded old id (its update's
  // expect_old). Refs not sent keep their own rule. expect_old: the first
  // update's, for the journal's row.
  std::map<std::string, std::string> compare_and_swap;
  std::optional<std::string> expect_old;
  // run, attempt > 1: the previous attempt was interrupted before its
  // dispatch claim (no child could have existed, nothing was sent), so this
  // one simply runs again: no compare-and-swap (J4).
  bool resumed = false;
};

// Decides for `draft` (its id, what it pushes where) against what the
// journal knows, and journals the submission durably when it runs.
// `draft.attempt` is ignored (the journal decides). Never throws; journal
// errors refuse (a delivery never runs unjournalled).
Admission admit(journal::Journal& j, journal::Submission draft);

// What the same id does now, by how its latest attempt ended: the id table
// of DESIGN §6, decided here and nowhere else (admission, `show`, the
// service). For a finished record.
struct SameIdAgain {
  enum class Action {
    replay,            // the recorded outcome is the answer; nothing is sent
    run,               // nothing was sent: it runs again as `attempt`
    compare_and_swap,  // it may have been applied: runs again as `attempt`, expecting `old_oid`
    refuse,            // `why`
  };
  Action action = Action::refuse;
  std::string why;  // one line for people, for every action
  Outcome recorded;
  int attempt = 0;
  // compare_and_swap: the recorded old id of every ref whose command was
  // sent (by ref), and old_oid, the first of them (what one ref reads).
  std::map<std::string, std::string> old_oids;
  std::optional<std::string> old_oid;
  // run: the previous attempt stopped before anything ran for a reason of
  // its own (interrupted before its claim, or stopped by a shutdown or a
  // lost lease): its deadline's message says so.
  bool resumed = false;
};
SameIdAgain same_id_again(const journal::Record& r);
// The id table's row for an outcome alone, before what only the journal
// knows (a journalled cancellation, the old id): `stop_confirmed` says
// whether recovery confirmed an unconfirmed stop since. For advice that
// has the outcome in hand (the CLI's); same_id_again decides with it.
SameIdAgain::Action id_table_row(const Outcome& o, bool stop_confirmed);

// A new delivery id: the wall-clock milliseconds, then 10 bytes of
// randomness, as 32 hex digits in UUID layout (ordered by time).
std::string new_delivery_id();

// J5: the outcome of a latest attempt whose cancellation won the dispatch
// claim (its revoke_requested entry says claimed: false), rebuilt from the
// journal: cancelled_no_dispatch, nothing sent. That entry is synced before
// the claim's loser could run, so the decision stands even when a crash lost
// the finished entry written after it; nullopt for any other attempt.
std::optional<Outcome> cancelled_before_dispatch(const journal::Record& r);

// The journalled old ids of the latest attempt (post_started, else
// advertised): every ref's, by ref, from "old_oids" (an entry written before
// sets: "old_oid", the submission's one ref).
std::map<std::string, std::string> journalled_old_oids(const journal::Record& r);
// The refs whose commands the latest attempt's POST sent, in the request's
// order: post_started's "sent" (absent: every ref it names an old id for,
// or, for an entry written before sets, the one ref). Empty without a
// post_started.
std::vector<std::string> journalled_sent(const journal::Record& r);
// The first of journalled_old_oids in the request's order.
std::optional<std::string> journalled_old_oid(const journal::Record& r);

}  // namespace courier::seat
