// ref-outcomes.cpp — a delivery of several refs, judged per ref with no
// process: the verdict's per-ref statuses and effects (J2 per ref, T4), the
// combined effect, J4's identity of a set and its compare-and-swap per ref,
// and the outcome's refs through the document and the journal.
#include <doctest/doctest.h>

#include "journal/journal.hpp"
#include "journal_fixtures.hpp"
#include "report/outcome_json.hpp"
#include "seat/admission.hpp"
#include "supervisor/phases_seen.hpp"
#include "supervisor/verdict.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_ref_outcomes {

using namespace courier;
using namespace courier::supervisor;
using sys::kNsPerMs;

namespace {

const std::string kBranch = "refs/heads/main";
const std::string kTag = "refs/tags/v1";
const std::string kNewA(40, 'a');
const std::string kNewB(40, 'b');
const std::string kOldA(40, '1');
const std::string kOldB(40, '2');

protocol::Job two_ref_job() {
  protocol::Job job;
  job.updates = {RefUpdate{kBranch, kNewA, UpdateMode::fast_forward, std::nullopt},
                 RefUpdate{kTag, kNewB, UpdateMode::fast_forward, std::nullopt}};
  job.atomic = true;
  return job;
}

// A stop after the child asked to POST with `sent` (ref -> old id) and,
// when `cleared`, the POST was cleared.
StopFacts posted(const protocol::OldOids& sent, bool cleared, StopCause cause) {
  StopFacts f;
  f.observed.child.pid = 4242;
  f.observed.child.reaped = f.observed.child.stdout_eof = f.observed.child.stderr_eof = true;
  f.cause = cause;
  f.deadline = 1000 * kNsPerMs;
  PhasesSeen::on_job(two_ref_job(), f.observed);
  PhasesSeen::on_post_check(protocol::Check{std::string(protocol::kCheckPost), sent}, f.observed);
  if (cleared) f.observed.timings.post_started = 500 * kNsPerMs;
  return f;
}

protocol::ResultMsg result(wire::DeliveryStatus status, RefStatus first, RefStatus second) {
  protocol::ResultMsg r;
  r.status = status;
  r.refs = {protocol::RefResult{kBranch, first, std::nullopt, kOldA},
            protocol::RefResult{kTag, second, std::nullopt, kOldB}};
  return r;
}

RefOutcome ref_outcome(const std::string& ref, RefStatus s, RemoteEffect e) {
  RefOutcome r;
  r.ref = ref;
  r.status = s;
  r.remote_effect = e;
  return r;
}

}  // namespace

TEST_SUITE("ref-outcomes") {
  TEST_CASE("T4 J2: a report that leaves out a sent ref is never taken as delivered: every sent ref stays possible") {
    StopFacts f = posted({{kBranch, kOldA}, {kTag, kOldB}}, true, StopCause::after_result);
    // The child says delivered, one ref ok and the other "up to date":
    // but that ref's command was in the POST, so only a report can say.
    f.result = result(wire::DeliveryStatus::delivered, RefStatus::ok, RefStatus::up_to_date);
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::protocol_fault);
    CHECK(o.reason.find(kTag) != std::string::npos);
    REQUIRE(o.refs.size() == 2);
    for (const RefOutcome& r : o.refs) {
      CHECK(r.status == RefStatus::unknown);
      CHECK(r.remote_effect == RemoteEffect::possible);
    }
    CHECK(o.remote_effect == RemoteEffect::possible);
  }

  TEST_CASE("T4: a report naming ok for a ref whose command was not sent is a protocol fault") {
    StopFacts f = posted({{kBranch, kOldA}}, true, StopCause::after_result);
    f.result = result(wire::DeliveryStatus::delivered, RefStatus::ok, RefStatus::ok);
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::protocol_fault);
    CHECK(o.refs[0].remote_effect == RemoteEffect::possible);
    CHECK(o.refs[1].status == RefStatus::not_attempted);
    CHECK(o.refs[1].remote_effect == RemoteEffect::none);
  }

  TEST_CASE("J2: a kill during a POST of several refs leaves every sent ref possible and an unsent ref none") {
    for (auto cause : {StopCause::deadline, StopCause::revoked}) {
      StopFacts f = posted({{kBranch, kOldA}}, true, cause);
      const Outcome o = verdict(f);
      REQUIRE(o.refs.size() == 2);
      CHECK(o.refs[0].status == RefStatus::unknown);
      CHECK(o.refs[0].remote_effect == RemoteEffect::possible);
      CHECK(o.refs[0].old_oid == kOldA);
      CHECK(o.refs[1].status == RefStatus::not_attempted);
      CHECK(o.refs[1].remote_effect == RemoteEffect::none);
      CHECK(o.remote_effect == RemoteEffect::mixed);
    }
    // Both sent: possible for the delivery as for each.
    StopFacts f = posted({{kBranch, kOldA}, {kTag, kOldB}}, true, StopCause::deadline);
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::deadline_killed);
    CHECK(o.refs[1].remote_effect == RemoteEffect::possible);
    CHECK(o.remote_effect == RemoteEffect::possible);
  }

  TEST_CASE("J2: refs the POST check named are not attempted, effect none, when the POST was never cleared") {
    StopFacts f = posted({{kBranch, kOldA}, {kTag, kOldB}}, false, StopCause::deadline);
    const Outcome o = verdict(f);
    for (const RefOutcome& r : o.refs) {
      CHECK(r.status == RefStatus::not_attempted);
      CHECK(r.remote_effect == RemoteEffect::none);
    }
    CHECK(o.remote_effect == RemoteEffect::none);
  }

  TEST_CASE("J2: a failure reported after the POST keeps every sent ref unknown, whatever the result says of it") {
    StopFacts f = posted({{kBranch, kOldA}, {kTag, kOldB}}, true, StopCause::after_result);
    f.result = result(wire::DeliveryStatus::transport_failed, RefStatus::ok, RefStatus::unknown);
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::transport_failed);
    CHECK(o.refs[0].status == RefStatus::unknown);
    CHECK(o.refs[0].remote_effect == RemoteEffect::possible);
    CHECK(o.remote_effect == RemoteEffect::possible);
  }

  TEST_CASE("J2: a non-atomic delivery with one ref applied and one refused here is rejected, its effect mixed") {
    StopFacts f = posted({{kBranch, kOldA}}, true, StopCause::after_result);
    f.result = result(wire::DeliveryStatus::rejected, RefStatus::ok, RefStatus::rejected);
    f.result->refs[1].reason = "non-fast-forward";
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::rejected);
    CHECK(o.refs[0].remote_effect == RemoteEffect::applied);
    CHECK(o.refs[1].status == RefStatus::rejected);
    CHECK(o.refs[1].reason == "non-fast-forward");
    CHECK(o.refs[1].remote_effect == RemoteEffect::none);
    CHECK(o.remote_effect == RemoteEffect::mixed);
  }

  TEST_CASE("J2: an atomic delivery the remote refused is refused for every ref, delivered when every ref is ok") {
    StopFacts f = posted({{kBranch, kOldA}, {kTag, kOldB}}, true, StopCause::after_result);
    f.result = result(wire::DeliveryStatus::rejected, RefStatus::ng, RefStatus::ng);
    CHECK(verdict(f).remote_effect == RemoteEffect::refused);
    f.result = result(wire::DeliveryStatus::delivered, RefStatus::ok, RefStatus::ok);
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::delivered);
    CHECK(o.remote_effect == RemoteEffect::applied);
    CHECK(o.refs[1].old_oid == kOldB);
  }

  TEST_CASE("J2: the combined effect leaves out refs already up to date, and is none when every ref is") {
    using S = RefStatus;
    using E = RemoteEffect;
    CHECK(combined_remote_effect(
              {ref_outcome(kBranch, S::ok, E::applied), ref_outcome(kTag, S::up_to_date, E::none)}) == E::applied);
    CHECK(combined_remote_effect({ref_outcome(kBranch, S::up_to_date, E::none)}) == E::none);
    CHECK(combined_remote_effect({ref_outcome(kBranch, S::ok, E::applied), ref_outcome(kTag, S::ng, E::refused)}) ==
          E::mixed);
    CHECK(combined_remote_effect({}) == E::none);
  }

  TEST_CASE("J4: a set's identity is its updates sorted by ref with their rules, its push options and atomic choice") {
    journal::Submission a = test::journal_submission("same");
    a.updates = {RefUpdate{kTag, kNewB, UpdateMode::force, std::nullopt},
                 RefUpdate{kBranch, kNewA, UpdateMode::fast_forward, std::nullopt}};
    a.atomic = true;
    a.push_options = {"ci.skip"};
    journal::Submission b = a;
    std::swap(b.updates[0], b.updates[1]);  // another order: the same set
    CHECK(journal::same_set(a, b));
    journal::Submission c = a;
    c.updates[0].update = UpdateMode::expect_old;
    c.updates[0].expect_old = kOldB;
    CHECK_FALSE(journal::same_set(a, c));
    // A retry in the default rule is the request first given (no --force again).
    c = a;
    c.updates[0].update = UpdateMode::fast_forward;
    CHECK(journal::same_set(a, c));
    c = a;
    c.updates[1].expect_old = kOldA;
    CHECK_FALSE(journal::same_set(a, c));
    c = a;
    c.push_options = {};
    CHECK_FALSE(journal::same_set(a, c));
    c = a;
    c.atomic = false;
    CHECK_FALSE(journal::same_set(a, c));
    c = a;
    c.updates.pop_back();
    CHECK_FALSE(journal::same_set(a, c));
    // A row written before sets were recorded: its one ref and object.
    journal::Submission legacy = test::journal_submission("same");
    journal::read_request(std::nullopt, legacy);
    CHECK(legacy.legacy_set);
    journal::Submission one = test::journal_submission("same");
    one.updates = {RefUpdate{legacy.ref, legacy.oid, UpdateMode::force, std::nullopt}};
    CHECK(journal::same_set(legacy, one));
    CHECK_FALSE(journal::same_set(legacy, a));
  }

  TEST_CASE("J4: the set goes through the request column and back") {
    journal::Submission a = test::journal_submission("set");
    a.updates = {RefUpdate{kBranch, kNewA, UpdateMode::expect_old, kOldA},
                 RefUpdate{kTag, std::string(40, '0'), UpdateMode::force, std::nullopt}};
    a.atomic = true;
    a.push_options = {"ci.skip", "notify=ops"};
    journal::Submission back = test::journal_submission("set");
    journal::read_request(journal::request_detail(a), back);
    CHECK_FALSE(back.legacy_set);
    CHECK(back.updates == a.updates);
    CHECK(back.atomic);
    CHECK(back.push_options == a.push_options);
  }

  TEST_CASE("J4: a compare-and-swap re-delivery compares each sent ref against its own recorded old id") {
    journal::Record r;
    r.submission = test::journal_submission("cas");
    r.submission.updates = {RefUpdate{kBranch, kNewA, UpdateMode::fast_forward, std::nullopt},
                            RefUpdate{kTag, kNewB, UpdateMode::fast_forward, std::nullopt},
                            RefUpdate{"refs/heads/other", kNewA, UpdateMode::fast_forward, std::nullopt}};
    auto add = [&r](journal::Step step, std::string detail) {
      r.entries.push_back(journal::Entry{step, 1, 1, std::move(detail)});
    };
    add(journal::Step::submitted, "{}");
    add(journal::Step::claimed, "{}");
    // Two refs sent, the third not (refused here, non-atomic).
    add(journal::Step::post_started, R"({"old_oids":{")" + kBranch + R"(":")" + kOldA + R"(",")" + kTag + R"(":")" +
                                         kOldB + R"(","refs/heads/other":")" + kOldA + R"("},"sent":[")" + kBranch +
                                         R"(",")" + kTag + R"("]})");
    Outcome o;
    o.kind = OutcomeKind::deadline_killed;
    o.remote_effect = RemoteEffect::possible;
    add(journal::Step::finished, journal::outcome_detail(o));
    r.finished = true;
    const seat::SameIdAgain again = seat::same_id_again(r);
    INFO(again.why);
    REQUIRE(again.action == seat::SameIdAgain::Action::compare_and_swap);
    const std::map<std::string, std::string> expected = {{kBranch, kOldA}, {kTag, kOldB}};
    CHECK(again.old_oids == expected);
    CHECK(again.old_oid == kOldA);
    // An entry written before sets: its one old id, for the one ref.
    r.entries[2].detail = R"({"old_oid":")" + kOldB + "\"}";
    r.submission.updates = {RefUpdate{r.submission.ref, kNewA, UpdateMode::fast_forward, std::nullopt}};
    const seat::SameIdAgain legacy = seat::same_id_again(r);
    CHECK(legacy.old_oids == std::map<std::string, std::string>{{r.submission.ref, kOldB}});
  }

  TEST_CASE("J2 J4: an outcome's refs go through the outcome document and the journal's record and back") {
    Outcome o;
    o.kind = OutcomeKind::rejected;
    o.remote_effect = RemoteEffect::mixed;
    o.refs = {ref_outcome(kBranch, RefStatus::ok, RemoteEffect::applied),
              ref_outcome(kTag, RefStatus::rejected, RemoteEffect::none)};
    o.refs[0].oid = kNewA;
    o.refs[0].old_oid = kOldA;
    o.refs[1].oid = std::string(40, '0');
    o.refs[1].reason = "remote ref does not exist";
    o.refs[0].observed_after = ObservedAfter{kNewA, 1234, true, ""};
    auto from_record = journal::outcome_from_detail(journal::outcome_detail(o));
    REQUIRE(from_record.has_value());
    CHECK(from_record->refs == o.refs);
    CHECK(from_record->remote_effect == RemoteEffect::mixed);
    const std::string doc = report::outcome_json(o, report::OutcomeFacts{"r", kBranch, kNewA, {}});
    auto from_doc = report::outcome_from_json(std::string_view(doc));
    REQUIRE_MESSAGE(from_doc.has_value(), (from_doc ? std::string() : from_doc.error().message));
    CHECK(from_doc->outcome.refs == o.refs);
  }
}

}  // namespace unit_ref_outcomes
