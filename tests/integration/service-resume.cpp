// service-resume.cpp — what a service needs from the library to resume
// deliveries after a crash, in-process with a real SQLite journal and the
// TLS fixture server: an absolute deadline (DeliveryRequest::deadline_unix_ms,
// D1), a host's note journalled with the submission (journal_note), and the
// admission rule that runs again an id interrupted before its dispatch claim
// (J4), next to the rules that still replay or refuse.
#include <doctest/doctest.h>

#include <algorithm>
#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "journal/journal.hpp"
#include "push_setup.hpp"
#include "service_support.hpp"
#include "service/deliveries.hpp"
#include "service/metrics.hpp"
#include "service/resume.hpp"
#include "sys/clock.hpp"
#include "sys/events.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"
#include "wire/remote.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_service_resume {

using namespace courier;
using nlohmann::json;
using sys::kNsPerMs;

namespace {

struct Setup : test::PushSetup {
  std::string journal_path;
  Setup() : PushSetup(3) { journal_path = dir.path() + "/state/journal.sqlite"; }

  ExecutorOptions journalled() const {
    ExecutorOptions o = executor_options();
    o.journal = journal_path;
    return o;
  }

  DeliveryRequest with_id(const std::string& id, const std::string& ref = "refs/heads/main") {
    DeliveryRequest r = request("r", tip, 30'000);
    r.id = id;
    r.ref = ref;
    return r;
  }

  // The delivery as another connection (another process) reads it now.
  std::optional<journal::Record> find(const std::string& id) const {
    auto j = journal::open_sqlite(journal_path);
    REQUIRE_MESSAGE(j.has_value(), (j ? "" : j.error().message));
    auto r = (*j)->find(id);
    REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
    return *r;
  }
  journal::Record record(const std::string& id) const {
    auto r = find(id);
    REQUIRE_MESSAGE(r.has_value(), "no delivery " << id << " in the journal");
    return *r;
  }

  // `git-courier push` on the same journal and lanes, as another process.
  std::vector<std::string> cli(const std::string& id, const std::string& ref) const {
    return {COURIER_BINARY,  "push",
            "--repo",        source,
            "--remote",      server.url("r"),
            "--ref",         ref,
            "--oid",         tip,
            "--ca-file",     server.ca_file(),
            "--lane-dir",    dir.path() + "/lanes",
            "--journal",     journal_path,
            "--delivery-id", id,
            "--quiet"};
  }
};

std::string steps_text(const journal::Record& r) {
  std::string s;
  for (const auto& e : r.latest()) s += std::string(journal::step_name(e.step)) + " ";
  return s;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Waits (bounded) for a fact another process writes and announces nothing
// of (a journal entry). The pause only paces the polling.
using test::gone_within;
using test::wait_for_fact;

std::int64_t child_pid_in(const journal::Record& r) {
  auto d = r.last(journal::Step::dispatched);
  return d ? std::atoll(journal::detail_text(d->detail, "child_pid").c_str()) : 0;
}

// A monotonic instant as wall-clock milliseconds, through one reading of
// each clock (the wall clock's reading is truncated to the millisecond).
double wall_ms_of(sys::MonoNs mono) {
  const sys::MonoNs m0 = sys::mono_now_ns();
  const std::int64_t w0 = sys::wall_now_ms();
  return static_cast<double>(w0) + static_cast<double>(mono - m0) / 1e6;
}

}  // namespace

TEST_SUITE("service-resume") {
  TEST_CASE(
      "D1: an absolute deadline is the turn's deadline: the journal keeps that instant exactly, the outcome's "
      "deadline is it, and the kill comes at it") {
    Setup s;
    s.server.create_bare_repo("r");
    s.server.hold(test::RequestMatch::next("GET", "info/refs"));
    Executor ex(s.journalled());
    DeliveryRequest r = s.with_id("absolute");
    r.budget = std::chrono::milliseconds(600'000);  // replaced by the absolute deadline
    const std::int64_t deadline = sys::wall_now_ms() + 1'500;
    r.deadline_unix_ms = deadline;
    auto h = ex.submit(std::move(r));
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    const Outcome o = h.wait();
    const std::int64_t ended = sys::wall_now_ms();
    CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
    CHECK(o.remote_effect == RemoteEffect::none);
    CHECK_MESSAGE(s.record("absolute").submission.deadline_unix_ms == deadline,
                  "the journal recorded another deadline than the one asked for");
    // Two wall-clock readings, each truncated to the millisecond (the
    // product's granularity, kNsPerMs): one at submit(), one here.
    const double off = wall_ms_of(o.deadline) - static_cast<double>(deadline);
    test::report("service-resume", "absolute deadline: outcome deadline minus the asked instant", off, "ms");
    CHECK_MESSAGE(std::fabs(off) <= 2.0, "the turn's deadline is " << off << " ms off the absolute deadline asked");
    CHECK_MESSAGE(ended >= deadline - 1, "the delivery ended " << (deadline - ended) << " ms before its deadline");
    test::report("service-resume", "absolute deadline: outcome after the deadline",
                 static_cast<double>(ended - deadline), "ms");
    s.server.release();
  }

  TEST_CASE(
      "D1: a deadline already past ends the delivery deadline_killed before dispatch, saying so: no claim, no "
      "child, nothing sent, a warm child left waiting") {
    for (const char* how : {"absolute", "zero budget"}) {
      CAPTURE(how);
      Setup s;
      s.server.create_bare_repo("r");
      ExecutorOptions opt = s.journalled();
      opt.warm_child = true;
      Executor ex(opt);
      const std::int64_t warm = ex.wait_warm_child(std::chrono::milliseconds(20'000));
      REQUIRE(warm > 0);
      DeliveryRequest r = s.with_id(std::string("late-") + how);
      if (std::string(how) == "absolute") {
        r.deadline_unix_ms = sys::wall_now_ms() - 5'000;
      } else {
        r.budget = std::chrono::milliseconds(0);
      }
      const Outcome o = ex.submit(std::move(r)).wait();
      CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
      CHECK(o.remote_effect == RemoteEffect::none);
      CHECK_FALSE(o.dispatched);
      CHECK(o.bytes_sent == std::optional<std::uint64_t>(0));
      CHECK_MESSAGE(contains(o.reason, "no child was spawned"), o.reason);
      if (std::string(how) == "absolute") {
        CHECK_MESSAGE(contains(o.reason, "had passed"), o.reason);
      } else {
        CHECK_MESSAGE(contains(o.reason, "budget (0 ms) ran out"), o.reason);
      }
      CHECK(ex.spawned() == 0);
      CHECK_MESSAGE(ex.warm_child_pid() == warm, "the warm child was used or lost for a delivery past its deadline");
      CHECK_MESSAGE(s.server.count().total == 0, s.server.log());
      const auto rec = s.record(o.delivery_id);
      CHECK(rec.finished);
      CHECK_MESSAGE(!rec.last(journal::Step::claimed).has_value(), steps_text(rec));
      CHECK(steps_text(rec) == "submitted finished ");
    }
  }

  TEST_CASE("J4: the host's note is journalled with the submission and read back compact; a bad one is refused") {
    Setup s;
    s.server.create_bare_repo("r");
    s.server.hold(test::RequestMatch::next("GET", "info/refs"));
    Executor ex(s.journalled());
    DeliveryRequest r = s.with_id("noted");
    r.journal_note = R"({ "credential": "buyer-7",  "update": "force", "remote_progress": false, "service": true })";
    auto h = ex.submit(std::move(r));
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    const std::string compact = R"({"credential":"buyer-7","remote_progress":false,"service":true,"update":"force"})";
    {
      // Read back while in flight, as a restarted service would find it.
      auto j = journal::open_sqlite(s.journal_path);
      REQUIRE(j.has_value());
      auto open = (*j)->open_work();
      REQUIRE(open.has_value());
      REQUIRE(open->size() == 1);
      CHECK((*open)[0].submission.note == compact);
      const auto sub = (*open)[0].last(journal::Step::submitted);
      REQUIRE(sub.has_value());
      const json detail = json::parse(sub->detail);
      CHECK(detail["note"] == json::parse(compact));
    }
    h.revoke("done");
    h.wait();
    s.server.release();
    CHECK(s.record("noted").submission.note == compact);
    // A delivery without a note (and any submission journalled before
    // notes existed) reads back none.
    Outcome plain = ex.submit(s.with_id("plain")).wait();
    CHECK_MESSAGE(plain.kind == OutcomeKind::delivered, plain.reason);
    CHECK(s.record("plain").submission.note.empty());
    // Not an object, or too long: failed before dispatch, nothing journalled.
    for (const std::string& bad :
         {std::string("[1, 2]"), std::string("{\"a\": "), "{\"pad\": \"" + std::string(kMaxJournalNote, 'x') + "\"}"}) {
      CAPTURE(bad.size());
      static int n = 0;
      DeliveryRequest b = s.with_id("bad-note-" + std::to_string(++n));
      b.journal_note = bad;
      const std::string id = b.id;
      const Outcome o = ex.submit(std::move(b)).wait();
      CHECK_MESSAGE(o.kind == OutcomeKind::failed, o.reason);
      CHECK_MESSAGE(contains(o.reason, "journal note"), o.reason);
      CHECK_MESSAGE(!s.find(id).has_value(), "a refused note was journalled");
    }
  }

  TEST_CASE(
      "J4: an id interrupted while queued (no claim, remote_effect none) runs again as attempt 2 and is delivered "
      "once; then it replays") {
    Setup s;
    s.server.create_bare_repo("r");
    s.server.hold(test::RequestMatch::next("GET", "info/refs"));
    // Process A holds the lane (its GET held); process B queues behind it
    // on the same remote and is SIGKILLed there, before any claim.
    test::LineProcess a(s.cli("holder", "refs/heads/main"));
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    {
      test::LineProcess b(s.cli("queued", "refs/heads/b"));
      REQUIRE_MESSAGE(wait_for_fact([&] { return s.find("queued").has_value(); }, 10'000),
                      "the queued delivery was never journalled");
      b.kill_hard();
      b.wait_exit();
    }
    s.server.release();
    CHECK(a.wait_exit() == 0);
    {
      const auto left = s.record("queued");
      CHECK_FALSE(left.finished);
      CHECK_MESSAGE(steps_text(left) == "submitted ", steps_text(left));
    }
    const long posts_before = s.posts("r");
    Executor ex(s.journalled());
    REQUIRE_MESSAGE(ex.recovered_at_start().has_value(), ex.recovered_at_start().error().message);
    REQUIRE(ex.recovered_at_start()->size() == 1);
    CHECK((*ex.recovered_at_start())[0].kind == OutcomeKind::interrupted);
    CHECK((*ex.recovered_at_start())[0].remote_effect == RemoteEffect::none);
    const Outcome o = ex.submit(s.with_id("queued", "refs/heads/b")).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(o.attempt == 2);
    CHECK_FALSE(o.replayed);
    CHECK(s.posts("r") == posts_before + 1);
    CHECK(s.remote_ref("r", "refs/heads/b") == s.tip);
    const auto rec = s.record("queued");
    CHECK(rec.submission.attempt == 2);
    CHECK_FALSE(rec.submission.expect_old.has_value());
    // And now it is delivered: the same id again replays, nothing is sent.
    const Outcome again = ex.submit(s.with_id("queued", "refs/heads/b")).wait();
    CHECK(again.kind == OutcomeKind::delivered);
    CHECK(again.replayed);
    CHECK(s.posts("r") == posts_before + 1);
  }

  TEST_CASE(
      "J4: an id interrupted after its dispatch claim with remote_effect none runs again as its next attempt (the id "
      "table: nothing was sent)") {
    Setup s;
    s.server.create_bare_repo("r");
    s.server.hold(test::RequestMatch::next("GET", "info/refs"));
    {
      test::LineProcess cli(s.cli("claimed", "refs/heads/main"));
      REQUIRE(s.server.wait_for_held(20'000).has_value());
      journal::Record r;
      REQUIRE(wait_for_fact([&] { return child_pid_in(r = s.record("claimed")) > 0; }, 10'000));
      cli.kill_hard();
      cli.wait_exit();
      REQUIRE(gone_within(child_pid_in(r), 5'000));
    }
    s.server.release();
    const auto before = s.server.count().total;
    Executor ex(s.journalled());
    REQUIRE(ex.recovered_at_start().has_value());
    REQUIRE(ex.recovered_at_start()->size() == 1);
    CHECK((*ex.recovered_at_start())[0].remote_effect == RemoteEffect::none);
    REQUIRE(s.record("claimed").last(journal::Step::claimed).has_value());
    const Outcome o = ex.submit(s.with_id("claimed")).wait();
    CHECK_MESSAGE(!o.replayed, (std::string("an interruption with nothing sent replayed: ") + outcome_name(o.kind) +
                                ", " + o.reason));
    CHECK_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(o.attempt == 2);
    CHECK(ex.spawned() == 1);
    CHECK(s.server.count().total > before);
    CHECK(s.record("claimed").submission.attempt == 2);
  }

  TEST_CASE(
      "J4 D1: a resumed id whose deadline passed while nothing ran it ends deadline_killed before dispatch, "
      "saying so, with remote_effect none") {
    Setup s;
    s.server.create_bare_repo("r");
    s.server.hold(test::RequestMatch::next("GET", "info/refs"));
    test::LineProcess a(s.cli("holder", "refs/heads/main"));
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    {
      test::LineProcess b(s.cli("late", "refs/heads/b"));
      REQUIRE(wait_for_fact([&] { return s.find("late").has_value(); }, 10'000));
      b.kill_hard();
      b.wait_exit();
    }
    s.server.release();
    CHECK(a.wait_exit() == 0);
    const long posts_before = s.posts("r");
    Executor ex(s.journalled());
    DeliveryRequest r = s.with_id("late", "refs/heads/b");
    // The first deadline, as the journal has it, moved into the past: the
    // service down for longer than the delivery's deadline allowed.
    r.deadline_unix_ms = sys::wall_now_ms() - 1'000;
    const Outcome o = ex.submit(std::move(r)).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
    CHECK(o.attempt == 2);
    CHECK(o.remote_effect == RemoteEffect::none);
    CHECK_MESSAGE(contains(o.reason, "previous attempt was interrupted before dispatch"), o.reason);
    CHECK(ex.spawned() == 0);
    CHECK(s.posts("r") == posts_before);
    CHECK(s.remote_ref("r", "refs/heads/b").empty());
  }

  TEST_CASE(
      "J4 J1 D1: the queued deliveries a dead service left, and a claimed one whose POST never began, are found "
      "before recovery and, submitted again with their first deadline, delivered once; one whose POST may have begun, "
      "revoked and CLI deliveries are not resumed") {
    Setup s;
    s.server.create_bare_repo("r");
    auto me = journal::identify(sys::self_pid());
    REQUIRE(me.has_value());
    auto remote = wire::parse_remote(s.server.url("r"));
    REQUIRE(remote.has_value());
    const std::int64_t first_deadline = sys::wall_now_ms() + 60'000;
    service::ServiceNote force;
    force.update = UpdateMode::force;
    {
      auto j = journal::open_sqlite(s.journal_path);
      REQUIRE(j.has_value());
      // Journalled by "this pid" with another start time: a process that is gone.
      auto submit = [&](const std::string& id, const std::string& ref, std::int64_t deadline, std::string note) {
        journal::Submission sub;
        sub.id = id;
        sub.repo = s.source;
        sub.remote = remote->canonical;
        sub.lane = remote->lane;
        sub.ref = ref;
        sub.oid = s.tip;
        sub.deadline_unix_ms = deadline;
        sub.submitter = *me;
        sub.submitter.start_ticks += 1;
        sub.note = std::move(note);
        REQUIRE((*j)->submit(sub, journal::wall_now_ms()).has_value());
      };
      submit("svc-queued", "refs/heads/q", first_deadline, service::note_text(force));
      submit("svc-late", "refs/heads/l", sys::wall_now_ms() - 1'000, service::note_text({}));
      submit("svc-claimed", "refs/heads/c", first_deadline, service::note_text({}));
      REQUIRE((*j)->append("svc-claimed", {journal::Step::claimed, 1, journal::wall_now_ms(), "{}"}, false));
      submit("svc-posted", "refs/heads/p", first_deadline, service::note_text({}));
      REQUIRE((*j)->append("svc-posted", {journal::Step::claimed, 1, journal::wall_now_ms(), "{}"}, false));
      REQUIRE((*j)->append("svc-posted", {journal::Step::post_started, 1, journal::wall_now_ms(), R"({"old_oid":""})"},
                           true));
      submit("svc-revoked", "refs/heads/v", first_deadline, service::note_text({}));
      REQUIRE((*j)->append("svc-revoked",
                           {journal::Step::revoke_requested, 1, journal::wall_now_ms(), R"({"cause":"x"})"}, true));
      submit("cli-queued", "refs/heads/x", first_deadline, "");
      auto left = service::find_left_behind(**j);
      REQUIRE_MESSAGE(left.has_value(), left.error().message);
      std::vector<std::string> ids;
      for (const auto& lb : *left) ids.push_back(lb.submission.id);
      // In the journal's order (submission time, then id): the two were
      // submitted within one millisecond here, so compare them as a set.
      std::sort(ids.begin(), ids.end());
      CHECK(ids == std::vector<std::string>{"svc-claimed", "svc-late", "svc-queued"});
      REQUIRE(left->size() == 3);
      for (const auto& lb : *left) {
        CHECK(lb.claimed == (lb.submission.id == "svc-claimed"));
        if (lb.submission.id == "svc-queued") CHECK(lb.note.update == UpdateMode::force);
      }
      // The service's order: left-behind found, then the registry and the
      // Executor (its recovery finishes all six interrupted), then resumed.
      service::Metrics metrics;
      auto own = journal::open_sqlite(s.journal_path);
      REQUIRE(own.has_value());
      service::RegistryOptions ro;
      ro.ca_file = s.server.ca_file();
      service::Deliveries deliveries(ro, std::move(*own), metrics);
      Executor ex(s.journalled());
      REQUIRE(ex.recovered_at_start().has_value());
      CHECK(ex.recovered_at_start()->size() == 6);
      deliveries.attach(&ex);
      CHECK(service::resume_left_behind(*left, deliveries, {}) == 3);
      REQUIRE(deliveries.wait_idle(std::chrono::steady_clock::now() + std::chrono::seconds(60)));
      std::vector<Outcome> outs;
      for (const char* id : {"svc-queued", "svc-late", "svc-claimed"}) {
        auto d = deliveries.find(id);
        REQUIRE(d != nullptr);
        REQUIRE(d->outcome().has_value());
        outs.push_back(*d->outcome());
      }
      CHECK_MESSAGE(outs[0].kind == OutcomeKind::delivered, outs[0].reason);
      CHECK(outs[0].attempt == 2);
      CHECK(s.remote_ref("r", "refs/heads/q") == s.tip);
      CHECK_MESSAGE(outs[1].kind == OutcomeKind::deadline_killed, outs[1].reason);
      CHECK(outs[1].remote_effect == RemoteEffect::none);
      CHECK_MESSAGE(contains(outs[1].reason, "passed while nothing ran this delivery"), outs[1].reason);
      CHECK_MESSAGE(outs[2].kind == OutcomeKind::delivered, outs[2].reason);
      CHECK(outs[2].attempt == 2);
      CHECK(s.remote_ref("r", "refs/heads/c") == s.tip);
      CHECK(s.remote_ref("r", "refs/heads/p").empty());
      CHECK(deliveries.find("svc-posted") == nullptr);
      CHECK(s.posts("r") == 2);
      const auto q = s.record("svc-queued");
      CHECK_MESSAGE(q.submission.deadline_unix_ms == first_deadline, "the resumed attempt got another deadline");
      CHECK(service::note_from(q.submission.note).has_value());
      // A delivery whose credential is gone from the configuration is not
      // sent without it (nor with another): it stays interrupted.
      service::ServiceNote named;
      named.credential = "buyer-7";
      CHECK_FALSE(service::resubmission(service::LeftBehind{q.submission, named}, {}).has_value());
      CHECK(service::resubmission(service::LeftBehind{q.submission, named},
                                  {{"buyer-7", {"bearer:/x", {q.submission.remote}}}})
                ->credential == "buyer-7");
      auto again = service::find_left_behind(**j);
      REQUIRE(again.has_value());
      CHECK(again->empty());
    }
  }
}

}  // namespace integration_service_resume
