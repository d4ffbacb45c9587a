// id-table.cpp — J4, J5: what the same delivery id does when it is
// submitted again, by how its latest attempt ended (the id table of DESIGN
// §6), decided by seat::same_id_again from journal records alone.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "journal/journal.hpp"
#include "seat/admission.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_id_table {

using namespace courier;
using Action = seat::SameIdAgain::Action;

namespace {

const std::string kOld(40, '1');

struct Ending {
  OutcomeKind kind;
  RemoteEffect effect;
  std::optional<RevokeCause> revoked_by = std::nullopt;
  // A revoke_requested entry of this attempt: its cause and whether the
  // claim had been made.
  std::optional<std::pair<RevokeCause, bool>> revocation = std::nullopt;
  bool stop_confirmed = false;
  bool old_id_journalled = true;
};

journal::Record record_of(const Ending& e) {
  journal::Record r;
  r.submission.id = "table";
  r.submission.attempt = 1;
  auto add = [&r](journal::Step step, std::string detail) {
    r.entries.push_back(journal::Entry{step, 1, 1, std::move(detail)});
  };
  add(journal::Step::submitted, "{}");
  add(journal::Step::claimed, "{}");
  if (e.effect != RemoteEffect::none) {
    add(journal::Step::post_started, e.old_id_journalled ? R"({"old_oid":")" + kOld + "\"}" : R"({"old_oid":""})");
  }
  if (e.revocation) {
    add(journal::Step::revoke_requested, std::string(R"({"cause":")") + revoke_cause_name(e.revocation->first) +
                                             R"(","reason":"words","claimed":)" +
                                             (e.revocation->second ? "true" : "false") + "}");
  }
  Outcome o;
  o.kind = e.kind;
  o.remote_effect = e.effect;
  o.revoked_by = e.revoked_by;
  if (e.revoked_by) o.revoke_cause = "words";
  add(journal::Step::finished, journal::outcome_detail(o));
  if (e.stop_confirmed) add(journal::Step::stop_confirmed, R"({"by":"recovery"})");
  r.finished = true;
  return r;
}

struct Row {
  const char* name;
  Ending ending;
  Action action;
};

}  // namespace

TEST_SUITE("id-table") {
  TEST_CASE("J4 J5: the same id again does what the id table says for every way the last attempt can end") {
    using K = OutcomeKind;
    using E = RemoteEffect;
    using C = RevokeCause;
    const std::vector<Row> rows = {
        {"delivered", {K::delivered, E::applied}, Action::replay},
        {"up_to_date", {K::up_to_date, E::none}, Action::replay},
        {"rejected", {K::rejected, E::refused}, Action::replay},
        {"cancelled_no_dispatch", {K::cancelled_no_dispatch, E::none, C::caller}, Action::replay},
        {"revoked by the caller, possible", {K::revoked, E::possible, C::caller}, Action::replay},
        {"revoked by authority, none", {K::revoked, E::none, C::authority}, Action::replay},
        {"revoked by a shutdown, none", {K::revoked, E::none, C::shutdown}, Action::run},
        {"revoked by a shutdown, possible", {K::revoked, E::possible, C::shutdown}, Action::compare_and_swap},
        {"revoked by a lost lease, none", {K::revoked, E::none, C::lease_lost}, Action::run},
        {"revoked by a lost lease, possible", {K::revoked, E::possible, C::lease_lost}, Action::compare_and_swap},
        {"transport_failed, none", {K::transport_failed, E::none}, Action::run},
        {"auth_failed, none", {K::auth_failed, E::none}, Action::run},
        {"deadline_killed, none", {K::deadline_killed, E::none}, Action::run},
        {"deadline_killed, possible", {K::deadline_killed, E::possible}, Action::compare_and_swap},
        {"protocol_fault, possible", {K::protocol_fault, E::possible}, Action::compare_and_swap},
        {"spawn_failed, none", {K::spawn_failed, E::none}, Action::run},
        {"failed, none", {K::failed, E::none}, Action::run},
        {"interrupted, none", {K::interrupted, E::none}, Action::run},
        {"interrupted, possible", {K::interrupted, E::possible}, Action::compare_and_swap},
        {"lane_poisoned", {K::lane_poisoned, E::none}, Action::run},
        {"cancel_uncertain, unconfirmed", {K::cancel_uncertain, E::possible, C::caller}, Action::refuse},
        {"cancel_uncertain, confirmed by recovery",
         {K::cancel_uncertain, E::possible, C::caller, std::nullopt, true},
         Action::replay},
        {"unreaped, unconfirmed", {K::unreaped, E::none}, Action::refuse},
        {"unreaped, confirmed by recovery", {K::unreaped, E::none, std::nullopt, std::nullopt, true}, Action::run},
        {"possible with no old id journalled",
         {K::transport_failed, E::possible, std::nullopt, std::nullopt, false, false},
         Action::refuse},
        // J5: a journalled cancellation by the caller is final whatever
        // the finished entry says (a crash lost the revoked outcome).
        {"interrupted, possible, after the caller's journalled revocation",
         {K::interrupted, E::possible, std::nullopt, std::make_pair(C::caller, true)},
         Action::replay},
        {"interrupted, possible, after authority's journalled revocation",
         {K::interrupted, E::possible, std::nullopt, std::make_pair(C::authority, true)},
         Action::replay},
        {"interrupted, possible, after a shutdown's journalled revocation",
         {K::interrupted, E::possible, std::nullopt, std::make_pair(C::shutdown, true)},
         Action::compare_and_swap},
    };
    for (const auto& row : rows) {
      const seat::SameIdAgain again = seat::same_id_again(record_of(row.ending));
      INFO(row.name, ": ", again.why);
      CHECK(static_cast<int>(again.action) == static_cast<int>(row.action));
      CHECK_FALSE(again.why.empty());
      if (again.action == Action::compare_and_swap) {
        CHECK(again.old_oid == kOld);
        CHECK(again.attempt == 2);
      }
      if (again.action == Action::run) CHECK(again.attempt == 2);
    }
  }
}

}  // namespace unit_id_table
