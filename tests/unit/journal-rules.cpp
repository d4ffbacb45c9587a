// journal-rules.cpp — J3, J4, J5: what the journal accepts, decided by the
// pure rules module (src/journal/journal_rules.*) from a row's state alone:
// attempts in order, nothing after `finished` but a retained stop's
// confirmation, and a cancellation by the caller or authority final. Both
// stores ask these rules; tests/integration/journal-contract.cpp proves they do.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "journal/journal_rules.hpp"
#include "seat/admission.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_journal_rules {

using namespace courier;
using namespace courier::journal;

namespace {

const Step kAllSteps[] = {Step::submitted,        Step::claimed,      Step::dispatched,
                          Step::advertised,       Step::post_started, Step::answered,
                          Step::revoke_requested, Step::finished,     Step::stop_confirmed};
// Every outcome kind the journal can record.
std::vector<OutcomeKind> all_kinds() {
  std::vector<OutcomeKind> out;
  for (const auto& row : kOutcomeRows) out.push_back(row.kind);
  return out;
}

const Step kDispatchSteps[] = {Step::claimed, Step::dispatched, Step::advertised, Step::post_started, Step::answered};

std::string finished_detail(OutcomeKind kind, RemoteEffect effect = RemoteEffect::none,
                            std::optional<RevokeCause> by = std::nullopt) {
  Outcome o;
  o.kind = kind;
  o.remote_effect = effect;
  o.revoked_by = by;
  return outcome_detail(o);
}

std::string revocation_detail(RevokeCause cause, bool claimed) {
  return std::string(R"({"cause":")") + revoke_cause_name(cause) + R"(","reason":"words","claimed":)" +
         (claimed ? "true" : "false") + "}";
}

// An entry of `step` for attempt 1, with a detail that step's writer gives.
Entry entry(Step step, int attempt = 1) {
  std::string detail = "{}";
  if (step == Step::finished) detail = finished_detail(OutcomeKind::delivered, RemoteEffect::applied);
  if (step == Step::revoke_requested) detail = revocation_detail(RevokeCause::shutdown, true);
  return Entry{step, attempt, 1, detail};
}

// Attempt 1's row after these entries (its submitted entry first).
RowState row_after(const std::vector<Entry>& entries) {
  std::vector<Entry> all = {Entry{Step::submitted, 1, 1, "{}"}};
  all.insert(all.end(), entries.begin(), entries.end());
  bool finished = false;
  for (const Entry& e : entries) finished = finished || e.step == Step::finished;
  return row_state(1, finished, all);
}

bool accepted(const RowState& row, const Entry& e) { return may_append("d", row, e).has_value(); }

// The error code of a refusal; none when it was accepted.
std::optional<Errc> refusal(const Result<void>& r) {
  if (r) return std::nullopt;
  return r.error().code;
}

bool says(const Result<void>& r, const std::string& words) {
  return !r && r.error().message.find(words) != std::string::npos;
}

}  // namespace

TEST_SUITE("journal-rules") {
  TEST_CASE(
      "J3: after finished, the rules accept no entry of that attempt but one stop_confirmed for a retained stop") {
    // Every outcome kind the journal can record, and every step after it.
    for (OutcomeKind kind : all_kinds()) {
      const RowState row = row_after({Entry{Step::finished, 1, 1, finished_detail(kind)}});
      CAPTURE(outcome_name(kind));
      REQUIRE(row.finished);
      REQUIRE(row.outcome == std::optional<OutcomeKind>(kind));
      for (Step s : kAllSteps) {
        CAPTURE(step_name(s));
        const auto r = may_append("d", row, entry(s));
        if (s == Step::stop_confirmed && is_unconfirmed(kind)) {
          CHECK(r.has_value());
          continue;
        }
        CHECK(refusal(r) == Errc::journal_conflict);
        if (s != Step::submitted && s != Step::stop_confirmed) CHECK(says(r, "already finished"));
      }
      // Confirmed once: never again.
      if (is_unconfirmed(kind)) {
        const RowState confirmed = row_after({Entry{Step::finished, 1, 1, finished_detail(kind)},
                                              Entry{Step::stop_confirmed, 1, 1, R"({"by":"recovery"})"}});
        CHECK(says(may_append("d", confirmed, entry(Step::stop_confirmed)), "already confirmed"));
      }
    }
    // An outcome nobody can read says nothing of a confirmed stop: its
    // confirmation is accepted (as open_work lists it).
    RowState unreadable = row_after({Entry{Step::finished, 1, 1, R"({"kind":"delivered"})"}});
    CHECK_FALSE(unreadable.outcome.has_value());
    CHECK(accepted(unreadable, entry(Step::stop_confirmed)));
    // Before finished: every step of the attempt but submitted and stop_confirmed.
    const RowState open = row_after({});
    for (Step s : kAllSteps) {
      CAPTURE(step_name(s));
      CHECK(accepted(open, entry(s)) == (s != Step::submitted && s != Step::stop_confirmed));
    }
    CHECK(says(may_append("d", open, entry(Step::stop_confirmed)), "no retained stop to confirm"));
  }

  TEST_CASE("J1 J4: the rules take entries for the latest attempt only, and a next attempt only after it finished") {
    // Unknown ids: attempt 1 only; an entry is journal_failed, not a conflict.
    CHECK(may_submit("d", std::nullopt, 1).has_value());
    CHECK(refusal(may_submit("d", std::nullopt, 2)) == Errc::journal_conflict);
    CHECK(refusal(may_submit("", std::nullopt, 1)) == Errc::journal_failed);
    CHECK(refusal(may_append("ghost", std::nullopt, entry(Step::claimed))) == Errc::journal_failed);
    // A finished entry must carry an outcome (open_work and the id table read it).
    CHECK(refusal(may_append("d", row_after({}), Entry{Step::finished, 1, 1, R"({"kind":"x"})"})) ==
          Errc::journal_failed);
    // Unfinished: no attempt at all is taken, the next one included.
    const RowState open = row_after({});
    for (int attempt : {1, 2, 3}) {
      CAPTURE(attempt);
      const auto r = may_submit("d", open, attempt);
      CHECK(refusal(r) == Errc::journal_conflict);
      CHECK(says(r, "already has attempt 1, not finished"));
    }
    // Finished: the next attempt only.
    const RowState done = row_after({Entry{Step::finished, 1, 1, finished_detail(OutcomeKind::transport_failed)}});
    CHECK(may_submit("d", done, 2).has_value());
    CHECK(refusal(may_submit("d", done, 1)) == Errc::journal_conflict);
    CHECK(refusal(may_submit("d", done, 3)) == Errc::journal_conflict);
    // Entries of another attempt than the latest are refused.
    const RowState second = row_state(2, false, {Entry{Step::submitted, 2, 1, "{}"}});
    CHECK(says(may_append("d", second, entry(Step::claimed, 1)), "its current attempt is 2"));
    CHECK(says(may_append("d", second, entry(Step::claimed, 3)), "its current attempt is 2"));
    CHECK(accepted(second, entry(Step::claimed, 2)));
    // The row's state reads the latest attempt's entries only.
    const RowState later =
        row_state(2, false,
                  {Entry{Step::revoke_requested, 1, 1, revocation_detail(RevokeCause::caller, false)},
                   Entry{Step::submitted, 2, 1, "{}"}});
    CHECK_FALSE(later.cancelled.has_value());
  }

  TEST_CASE(
      "J5: after a cancellation by the caller or authority before the claim, no step of a dispatch and no next "
      "attempt is accepted") {
    for (RevokeCause by : {RevokeCause::caller, RevokeCause::authority}) {
      CAPTURE(revoke_cause_name(by));
      const Entry revoked{Step::revoke_requested, 1, 1, revocation_detail(by, false)};
      const RowState row = row_after({revoked});
      REQUIRE(row.cancelled.has_value());
      CHECK(row.cancelled->before_claim);
      for (Step s : kDispatchSteps) {
        CAPTURE(step_name(s));
        const auto r = may_append("d", row, entry(s));
        CHECK(refusal(r) == Errc::journal_conflict);
        CHECK(says(r, "a cancellation is final"));
      }
      // Its outcome is still written (by its process, or by recovery).
      CHECK(accepted(row, entry(Step::finished)));
      const RowState ended =
          row_after({revoked, Entry{Step::finished, 1, 1, finished_detail(OutcomeKind::cancelled_no_dispatch)}});
      const auto again = may_submit("d", ended, 2);
      CHECK(refusal(again) == Errc::journal_conflict);
      CHECK(says(again, "a new delivery needs a new id"));
    }
  }

  TEST_CASE(
      "J5: after a cancellation by the caller or authority of a live delivery, its child is still recorded but "
      "no POST starts and no next attempt is taken") {
    for (RevokeCause by : {RevokeCause::caller, RevokeCause::authority}) {
      CAPTURE(revoke_cause_name(by));
      const Entry revoked{Step::revoke_requested, 1, 1, revocation_detail(by, true)};
      const RowState row = row_after({Entry{Step::claimed, 1, 1, "{}"}, revoked});
      REQUIRE(row.cancelled.has_value());
      CHECK_FALSE(row.cancelled->before_claim);
      // A claim that won before the revocation is written after it (its
      // entry was slower); the child's identity is what recovery needs (J3).
      CHECK(accepted(row, entry(Step::claimed)));
      CHECK(accepted(row, entry(Step::dispatched)));
      CHECK(accepted(row, entry(Step::advertised)));
      const auto post = may_append("d", row, entry(Step::post_started));
      CHECK(refusal(post) == Errc::journal_conflict);
      CHECK(says(post, "no POST begins after it"));
      CHECK(accepted(row, entry(Step::finished)));
      for (OutcomeKind kind : {OutcomeKind::revoked, OutcomeKind::interrupted, OutcomeKind::deadline_killed}) {
        CAPTURE(outcome_name(kind));
        const RowState ended = row_after({revoked, Entry{Step::finished, 1, 1, finished_detail(kind)}});
        CHECK(says(may_submit("d", ended, 2), "a cancellation is final"));
      }
    }
  }

  TEST_CASE(
      "J5: a stop by a shutdown or a lost lease is not a cancellation: every step, and the next attempt, "
      "are accepted") {
    for (RevokeCause by : {RevokeCause::shutdown, RevokeCause::lease_lost}) {
      for (bool claimed : {false, true}) {
        CAPTURE(revoke_cause_name(by));
        CAPTURE(claimed);
        const Entry revoked{Step::revoke_requested, 1, 1, revocation_detail(by, claimed)};
        const RowState row = row_after({revoked});
        CHECK_FALSE(row.cancelled.has_value());
        for (Step s : kDispatchSteps) CHECK(accepted(row, entry(s)));
        const RowState ended = row_after({revoked, Entry{Step::finished, 1, 1, finished_detail(OutcomeKind::revoked)}});
        CHECK(may_submit("d", ended, 2).has_value());
      }
    }
  }

  TEST_CASE("J5: a revocation journalled before causes were named is read by its words, as the id table reads it") {
    auto cause_of_words = [](const std::string& words) {
      return final_cancellation(Entry{Step::revoke_requested, 1, 1, R"({"reason":")" + words + "\"}"});
    };
    CHECK(cause_of_words("ctrl-c")->by == RevokeCause::caller);
    CHECK(cause_of_words("authority refused at post")->by == RevokeCause::authority);
    CHECK_FALSE(cause_of_words("the executor is shutting down").has_value());
    CHECK_FALSE(cause_of_words(std::string(kLeaseLostCause) + ": no renewal").has_value());
    // No "claimed" flag (written before it existed): not known to be before
    // the claim, so the facts of a dispatch are still taken.
    CHECK_FALSE(cause_of_words("ctrl-c")->before_claim);
  }

  TEST_CASE("J4 J5: the rules refuse a next attempt only where the id table never runs one") {
    using K = OutcomeKind;
    using E = RemoteEffect;
    int runs = 0, refused = 0;
    for (K kind : all_kinds()) {
      for (E effect : {E::none, E::possible}) {
        for (std::optional<RevokeCause> cause :
             {std::optional<RevokeCause>(), std::optional(RevokeCause::caller), std::optional(RevokeCause::authority),
              std::optional(RevokeCause::shutdown), std::optional(RevokeCause::lease_lost)}) {
          for (bool claimed : {false, true}) {
            if (!cause && claimed) continue;
            Record r;
            r.submission.id = "d";
            r.submission.attempt = 1;
            r.finished = true;
            r.entries.push_back(Entry{Step::submitted, 1, 1, "{}"});
            r.entries.push_back(Entry{Step::claimed, 1, 1, "{}"});
            r.entries.push_back(Entry{Step::post_started, 1, 1, R"({"old_oid":")" + std::string(40, '1') + "\"}"});
            if (cause) r.entries.push_back(Entry{Step::revoke_requested, 1, 1, revocation_detail(*cause, claimed)});
            r.entries.push_back(Entry{Step::finished, 1, 1, finished_detail(kind, effect, cause)});
            const auto action = seat::same_id_again(r).action;
            const bool table_runs =
                action == seat::SameIdAgain::Action::run || action == seat::SameIdAgain::Action::compare_and_swap;
            const bool rules_take = may_submit("d", row_state(1, true, r.entries), 2).has_value();
            CAPTURE(outcome_name(kind));
            CAPTURE(remote_effect_name(effect));
            CAPTURE((cause ? revoke_cause_name(*cause) : "no revocation"));
            CAPTURE(claimed);
            // Where the id table runs the id again, the store takes it;
            // where the store refuses, the id table replays or refuses.
            CHECK((rules_take || !table_runs));
            runs += table_runs;
            refused += !rules_take;
          }
        }
      }
    }
    MESSAGE("endings where the id table runs again: " << runs
                                                      << ", where the rules refuse the next attempt: " << refused);
    CHECK(runs > 0);
    CHECK(refused > 0);
  }
}

}  // namespace unit_journal_rules
