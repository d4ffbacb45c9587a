// journal-e2e.cpp — the journal with real processes, a real SQLite file
// and the TLS fixture server in front of git http-backend: where a delivery
// can be killed (a held advertisement GET, a held POST), by the deadline, a
// revocation or the parent's SIGKILL; what the journal, the outcome's
// remote_effect and the read-back then say (J1-J4); recovery; re-delivery.
#include <doctest/doctest.h>
#include <signal.h>
#include <sqlite3.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "journal/journal.hpp"
#include "push_setup.hpp"
#include "service_support.hpp"
#include "sys/clock.hpp"
#include "sys/events.hpp"
#include "sys/process.hpp"
#include "sys/process_owner.hpp"
#include "sys/spawn.hpp"
#include "journal_lock.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_journal_e2e {

using namespace courier;
using nlohmann::json;
using sys::kNsPerMs;

namespace {

struct Setup : test::JournalledSetup {
  explicit Setup(int commits = 3) : JournalledSetup(commits) {}

  std::vector<std::string> cli(std::vector<std::string> extra) const {
    std::vector<std::string> a = {COURIER_BINARY, "push",
                                  "--repo",       source,
                                  "--remote",     server.url("r"),
                                  "--ref",        "refs/heads/main",
                                  "--oid",        tip,
                                  "--ca-file",    server.ca_file(),
                                  "--lane-dir",   dir.path() + "/lanes",
                                  "--journal",    journal_path,
                                  "--quiet"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  test::RunResult recover(bool json_out = true) const {
    std::vector<std::string> a = {COURIER_BINARY,        "recover",   "--journal",     journal_path, "--lane-dir",
                                  dir.path() + "/lanes", "--ca-file", server.ca_file()};
    if (json_out) a.push_back("--json");
    return test::run(a, {}, test::Stdin::bytes, {"PATH=/usr/bin:/bin", "LANG=C"});
  }
};

std::vector<journal::Step> steps(const journal::Record& r) {
  std::vector<journal::Step> out;
  for (const auto& e : r.latest()) out.push_back(e.step);
  return out;
}

std::string steps_text(const journal::Record& r) {
  std::string s;
  for (auto step : steps(r)) s += std::string(journal::step_name(step)) + " ";
  return s;
}

bool has_step(const journal::Record& r, journal::Step s) { return r.last(s).has_value(); }

// Bounded waits on a fact (a pidfd's exit, a journal entry another process
// writes, a ref the server updates), shared with the service's tests.
using test::gone_within;
using test::wait_for_fact;

// Waits until the journal names the delivery's child (the dispatched entry
// is written off the supervising loop).
journal::Record wait_dispatched(const Setup& s, const std::string& id) {
  journal::Record r;
  if (!wait_for_fact([&] { return test::dispatched_child_pid(r = s.record(id)) > 0; }, 4'000)) {
    FAIL("the journal never named the child of " << id);
  }
  return r;
}

// What every "report on the wire" case asserts of the journal: the POST
// began, no report was judged (no answered entry), the delivery is
// finished with remote_effect possible.
void check_wire_journal(const Setup& s, const std::string& id) {
  const auto r = s.record(id);
  CHECK_MESSAGE(has_step(r, journal::Step::post_started), steps_text(r));
  CHECK_MESSAGE(!has_step(r, journal::Step::answered),
                "the journal says a report was judged although the response never ended: " << steps_text(r));
  CHECK(r.finished);
  if (auto fin = r.last(journal::Step::finished)) {
    CHECK(journal::detail_text(fin->detail, "remote_effect") == "possible");
  }
}

// The remote applied the pack and its report-status is on the wire, but
// the response's end is held: a deadline or a revocation ends the delivery
// there, through the library.
void report_on_wire_library(bool by_deadline) {
  Setup s;
  s.server.create_bare_repo("r");
  s.server.hold_response_end(test::RequestMatch::next("POST", "git-receive-pack"));
  const std::string id = by_deadline ? "wire-deadline" : "wire-revoke";
  Executor ex(s.journalled());
  const auto t0 = sys::mono_now_ns();
  auto h = ex.submit(s.with_id(id, s.tip, by_deadline ? 4'000 : 30'000));
  const auto held = s.server.wait_for_held(20'000);
  REQUIRE_MESSAGE(held.has_value(), s.server.log());
  const auto t_held = sys::mono_now_ns();
  // The backend exited before the held event: the remote has applied.
  CHECK(s.remote_ref("r") == s.tip);
  if (!by_deadline) h.revoke("the buyer cancelled after the report was sent");
  Outcome o = h.wait();
  const auto t_out = sys::mono_now_ns();
  test::report("journal", std::string("report on the wire, ") + id + ": submit to held", sys::ns_to_ms(t_held - t0),
               "ms");
  test::report("journal", std::string("report on the wire, ") + id + ": held to outcome", sys::ns_to_ms(t_out - t_held),
               "ms");
  MESSAGE(id << ": outcome " << std::string(outcome_name(o.kind)) << ", remote_effect "
             << std::string(remote_effect_name(o.remote_effect)) << ", journal " << steps_text(s.record(id))
             << ", reason: " << o.reason);
  // The response had not ended when the outcome came.
  CHECK(s.server.count().held == std::vector<long>{held->request});
  CHECK_MESSAGE(o.kind == (by_deadline ? OutcomeKind::deadline_killed : OutcomeKind::revoked), o.reason);
  CHECK_MESSAGE(o.remote_effect == RemoteEffect::possible,
                "J2: no report was concluded (the response never ended), yet remote_effect is "
                    << std::string(remote_effect_name(o.remote_effect)));
  CHECK(o.bytes_sent.value_or(0) > 0);
  check_wire_journal(s, id);
  CHECK(s.remote_ref("r") == s.tip);
  // The delivery is finished: nothing is left for recover to do.
  auto rec = s.recover();
  REQUIRE_MESSAGE(rec.exit_code == 0, rec.err);
  CHECK(json::parse(rec.out).empty());
  s.server.release(held->request);
}

// The same point, the parent CLI SIGKILLed there; recover finishes it and
// reads the ref back.
void report_on_wire_sigkill() {
  Setup s;
  s.server.create_bare_repo("r");
  s.server.hold_response_end(test::RequestMatch::next("POST", "git-receive-pack"));
  const std::string id = "wire-sigkill";
  test::LineProcess cli(s.cli({"--delivery-id", id}));
  const auto held = s.server.wait_for_held(20'000);
  REQUIRE_MESSAGE(held.has_value(), s.server.log());
  const auto r = wait_dispatched(s, id);
  CHECK(s.remote_ref("r") == s.tip);
  const auto t_kill = sys::mono_now_ns();
  cli.kill_hard();
  cli.wait_exit();
  // PDEATHSIG ends the child with its parent: wait for that fact.
  REQUIRE(gone_within(test::dispatched_child_pid(r), 5'000));
  test::report("journal", "report on the wire, wire-sigkill: parent SIGKILL to child gone",
               sys::ns_to_ms(sys::mono_now_ns() - t_kill), "ms");
  CHECK(s.server.count().held == std::vector<long>{held->request});
  {
    const auto before = s.record(id);
    CHECK_FALSE(before.finished);
    CHECK_MESSAGE(!has_step(before, journal::Step::answered), steps_text(before));
  }
  auto rec = s.recover();
  REQUIRE_MESSAGE(rec.exit_code == 0, rec.err);
  const json out = json::parse(rec.out);
  MESSAGE(id << ": recovered " << out.dump() << ", journal " << steps_text(s.record(id)));
  REQUIRE(out.size() == 1);
  CHECK(out[0]["delivery_id"] == id);
  CHECK(out[0]["kind"] == "interrupted");
  CHECK(out[0]["remote_effect"] == "possible");
  REQUIRE(out[0]["observed_after"].is_object());
  CHECK(out[0]["observed_after"]["oid"] == s.tip);
  CHECK(out[0]["observed_after"]["matches_this_delivery"] == true);
  check_wire_journal(s, id);
  CHECK(s.remote_ref("r") == s.tip);
  s.server.release(held->request);
}

// A push of `oid` under delivery id `id`, as the CLI's JSON.
std::vector<std::string> push_of(const Setup& s, const std::string& oid, const std::string& id) {
  std::vector<std::string> a = s.cli({"--delivery-id", id, "--json"});
  *(std::find(a.begin(), a.end(), "--oid") + 1) = oid;
  return a;
}

// A delivery ("cancelled") journalled, queued behind another ("holder",
// which then delivers tip~1) and cancelled there by Ctrl-C, after which a
// power cut loses its finished entry: the journal keeps the synced
// revoke_requested {claimed: false} and nothing after it.
// Returns tip~1, the id the remote's ref is left at.
std::string cancel_queued_then_lose_finished(Setup& s) {
  s.server.create_bare_repo("r");
  const std::string first = s.rev(s.tip + "~1");
  auto journalled = [&](const std::string& id) {
    auto j = journal::open_sqlite(s.journal_path);
    auto r = j ? (*j)->find(id) : Result<std::optional<journal::Record>>(std::nullopt);
    return r && r->has_value();
  };
  // The lane is held: a first delivery's child waits at its advertisement.
  s.server.hold(test::RequestMatch::next("GET", "info/refs"));
  test::LineProcess holder(push_of(s, first, "holder"));
  REQUIRE_MESSAGE(s.server.wait_for_held(20'000).has_value(), s.server.log());
  // The second is journalled, waits for the lane, and is cancelled there
  // (Ctrl-C): the cancellation wins the dispatch claim.
  test::LineProcess queued(push_of(s, s.tip, "cancelled"));
  REQUIRE(wait_for_fact([&] { return journalled("cancelled"); }, 20'000));
  ::kill(queued.pid(), SIGINT);
  const std::string said = queued.wait_line("{", 20'000);
  CHECK(queued.wait_exit() == 5);
  CHECK(json::parse(said)["outcome"] == "cancelled_no_dispatch");
  REQUIRE(has_step(s.record("cancelled"), journal::Step::revoke_requested));
  REQUIRE(s.record("cancelled").finished);
  // A power cut: the finished entry, written after the synced
  // revoke_requested without a sync of its own, is lost with the
  // deliveries row's flag that its transaction set.
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(s.journal_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    CHECK(sqlite3_exec(db,
                       "DELETE FROM entries WHERE id = 'cancelled' AND step = 'finished';"
                       "UPDATE deliveries SET finished = 0, outcome = NULL WHERE id = 'cancelled';",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  REQUIRE_FALSE(s.record("cancelled").finished);
  s.server.release();
  CHECK(holder.wait_exit() == 0);
  CHECK(s.remote_ref("r") == first);
  return first;
}

// The same id pushed again replays the cancellation: no child, no POST.
void check_cancellation_replayed(Setup& s, const std::string& first) {
  auto again = test::run(push_of(s, s.tip, "cancelled"), {}, test::Stdin::bytes, {"PATH=/usr/bin:/bin", "LANG=C"});
  CHECK(again.exit_code == 5);
  const json replay = json::parse(again.out);
  CHECK_MESSAGE(replay["outcome"] == "cancelled_no_dispatch", "the cancelled id was run again: " << again.out);
  CHECK(s.posts("r") == 1);
  CHECK_MESSAGE(s.remote_ref("r") == first, "a cancelled delivery was delivered");
  // `show` says what the same id does now, as admission decides it (J4).
  auto show = test::run({COURIER_BINARY, "show", "cancelled", "--journal", s.journal_path}, {}, test::Stdin::bytes,
                        {"PATH=/usr/bin:/bin", "LANG=C"});
  CHECK(show.exit_code == 0);
  CHECK_MESSAGE(show.out.find("the same id again: it was cancelled, and a cancellation is final") != std::string::npos,
                show.out);
  auto shown = test::run({COURIER_BINARY, "show", "cancelled", "--journal", s.journal_path, "--json"}, {},
                         test::Stdin::bytes, {"PATH=/usr/bin:/bin", "LANG=C"});
  const json j = json::parse(shown.out, nullptr, false);
  CHECK(j["same_id_again"]["action"] == "replay");
}

}  // namespace

TEST_SUITE("journal") {
  TEST_CASE(
      "J5: a cancellation before dispatch is final after a power cut loses its finished entry: recover and the same "
      "id replay it, nothing is sent") {
    Setup s;
    const std::string first = cancel_queued_then_lose_finished(s);
    // Recovery finishes it as what it was: cancelled before dispatch.
    auto rec = s.recover();
    REQUIRE_MESSAGE(rec.exit_code == 0, rec.err);
    const json out = json::parse(rec.out);
    MESSAGE("recovered " << out.dump());
    REQUIRE(out.size() == 1);
    CHECK(out[0]["delivery_id"] == "cancelled");
    CHECK_MESSAGE(out[0]["kind"] == "cancelled_no_dispatch", "recovery undid the journalled cancellation");
    CHECK(out[0]["remote_effect"] == "none");
    check_cancellation_replayed(s, first);
  }

  TEST_CASE(
      "J5: an id whose cancellation before dispatch a recovery finished as interrupted still replays the "
      "cancellation") {
    Setup s;
    const std::string first = cancel_queued_then_lose_finished(s);
    // What a recovery that ignored the cancellation wrote: interrupted,
    // nothing sent (a journal kept from before J5).
    {
      auto j = journal::open_sqlite(s.journal_path);
      REQUIRE(j.has_value());
      Outcome o;
      o.kind = OutcomeKind::interrupted;
      o.delivery_id = "cancelled";
      o.remote_effect = RemoteEffect::none;
      o.reason = "finished by recovery";
      REQUIRE((*j)->append("cancelled",
                           {journal::Step::finished, 1, journal::wall_now_ms(), journal::outcome_detail(o)}, true));
    }
    REQUIRE(s.record("cancelled").finished);
    check_cancellation_replayed(s, first);
  }

  TEST_CASE(
      "J1 J2: a child killed while the advertisement GET is held sent nothing: remote_effect none, no "
      "post_started in the journal") {
    for (const char* how : {"deadline", "revoke"}) {
      CAPTURE(how);
      Setup s;
      s.server.create_bare_repo("r");
      s.server.hold(test::RequestMatch::next("GET", "info/refs"));
      Executor ex(s.journalled());
      const bool by_deadline = std::string(how) == "deadline";
      auto h = ex.submit(s.with_id(std::string("get-") + how, s.tip, by_deadline ? 1'500 : 30'000));
      REQUIRE(s.server.wait_for_held(20'000).has_value());
      if (!by_deadline) h.revoke("the buyer cancelled");
      Outcome o = h.wait();
      CHECK_MESSAGE(o.kind == (by_deadline ? OutcomeKind::deadline_killed : OutcomeKind::revoked), o.reason);
      CHECK(o.remote_effect == RemoteEffect::none);
      CHECK(o.bytes_sent == std::optional<std::uint64_t>(0));
      CHECK_FALSE(o.kill_domain.empty());
      const auto r = s.record(o.delivery_id);
      CHECK_MESSAGE(!has_step(r, journal::Step::post_started), steps_text(r));
      CHECK(r.finished);
      CHECK(journal::detail_text(r.last(journal::Step::finished)->detail, "remote_effect") == "none");
      s.server.release();
    }
  }

  TEST_CASE("J1: a revocation is journalled with its cause, for a queued delivery before revoke() returns") {
    Setup s;
    s.server.create_bare_repo("r");
    s.server.hold(test::RequestMatch::next("GET", "info/refs"));
    Executor ex(s.journalled());
    auto first = ex.submit(s.with_id("holder", s.tip));
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    // The second waits behind the first's seat: never dispatched.
    auto second = ex.submit(s.with_id("queued", s.tip));
    second.revoke("the buyer cancelled the queued one");
    {
      // Read right after revoke() returned, through another connection.
      const auto r = s.record("queued");
      auto rr = r.last(journal::Step::revoke_requested);
      REQUIRE_MESSAGE(rr.has_value(), "revoke_requested is not durable when revoke() returns: " << steps_text(r));
      CHECK(journal::detail_text(rr->detail, "reason") == "the buyer cancelled the queued one");
      CHECK(journal::detail_text(rr->detail, "cause") == "caller");
    }
    CHECK(second.wait().kind == OutcomeKind::cancelled_no_dispatch);
    // A live one: the intent first (J1), then the kill.
    first.revoke("the buyer cancelled the live one");
    Outcome o = first.wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::revoked, o.reason);
    CHECK(o.revoke_cause == "the buyer cancelled the live one");
    const auto r = s.record("holder");
    auto rr = r.last(journal::Step::revoke_requested);
    REQUIRE_MESSAGE(rr.has_value(), steps_text(r));
    CHECK(journal::detail_text(rr->detail, "reason") == "the buyer cancelled the live one");
    CHECK(journal::detail_text(rr->detail, "cause") == "caller");
    CHECK(o.revoked_by == RevokeCause::caller);
    s.server.release();
  }

  TEST_CASE(
      "J1 J2: post_started is durable while the server holds the POST, and a kill then leaves remote_effect "
      "possible") {
    for (const char* how : {"deadline", "revoke"}) {
      CAPTURE(how);
      Setup s;
      s.server.create_bare_repo("r");
      s.server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
      Executor ex(s.journalled());
      const bool by_deadline = std::string(how) == "deadline";
      auto h = ex.submit(s.with_id(std::string("post-") + how, s.tip, by_deadline ? 3'000 : 30'000));
      REQUIRE(s.server.wait_for_held(20'000).has_value());
      {
        const auto r = s.record(std::string("post-") + how);
        auto ps = r.last(journal::Step::post_started);
        REQUIRE_MESSAGE(ps.has_value(),
                        "the POST is at the server but post_started is not journalled: " << steps_text(r));
        CHECK(journal::detail_text(ps->detail, "old_oid") == std::string(40, '0'));
      }
      if (!by_deadline) h.revoke("the buyer cancelled");
      Outcome o = h.wait();
      CHECK_MESSAGE(o.kind == (by_deadline ? OutcomeKind::deadline_killed : OutcomeKind::revoked), o.reason);
      CHECK_MESSAGE(o.remote_effect == RemoteEffect::possible, "a kill after post_started reported remote_effect "
                                                                   << std::string(remote_effect_name(o.remote_effect)));
      CHECK(o.bytes_sent.value_or(0) > 0);
      s.server.release();
    }
  }

  TEST_CASE(
      "J2 J3: a kill after the report is on the wire but before the response ended leaves remote_effect possible, "
      "and the read-back sees the applied id") {
    for (const std::string how : {"deadline", "revoke", "parent SIGKILL"}) {
      CAPTURE(how);
      if (how == "parent SIGKILL") {
        report_on_wire_sigkill();
      } else {
        report_on_wire_library(how == "deadline");
      }
    }
  }

  TEST_CASE(
      "J1: when post_started cannot be made durable the POST never starts: failed, remote_effect none, "
      "nothing sent") {
    Setup s;
    s.server.create_bare_repo("r");
    s.server.hold(test::RequestMatch::next("GET", "info/refs"));
    Executor ex(s.journalled());
    auto h = ex.submit(s.with_id("locked-at-post", s.tip));
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    wait_dispatched(s, "locked-at-post");
    Outcome o;
    {
      // A stuck process holds the journal's lock from here to the outcome.
      test::HeldJournalLock lock(s.journal_path);
      s.server.release();
      o = h.wait();
    }
    CHECK_MESSAGE(o.kind == OutcomeKind::failed, o.reason);
    CHECK(o.reason.find("post_started could not be journalled") != std::string::npos);
    CHECK(o.remote_effect == RemoteEffect::none);
    CHECK_FALSE(o.journal_error.empty());
    CHECK_MESSAGE(s.posts("r") == 0, "a POST reached the server although post_started was never durable");
    CHECK(s.remote_ref("r").empty());
  }

  TEST_CASE(
      "J2: a remote that applies the pack and drops the connection before answering: possible, and the "
      "read-back sees the new id") {
    Setup s;
    s.server.create_bare_repo("r");
    s.server.close_after_headers(test::RequestMatch::next("POST", "git-receive-pack"), test::CloseMode::none, true);
    auto r = test::run(s.cli({"--json", "--read-back", "--delivery-id", "dropped"}), {}, test::Stdin::bytes,
                       {"PATH=/usr/bin:/bin", "LANG=C"});
    CHECK_MESSAGE(r.exit_code == 3, r.err);
    const json j = json::parse(r.out);
    CHECK(j["outcome"] == "transport_failed");
    CHECK(j["remote_effect"] == "possible");
    CHECK(j["delivery_id"] == "dropped");
    REQUIRE(j["observed_after"].is_object());
    CHECK(j["observed_after"]["oid"] == s.tip);
    CHECK(j["observed_after"]["matches_this_delivery"] == true);
    CHECK(j["observed_after"]["at_unix_ms"].get<std::int64_t>() > 0);
    CHECK(s.remote_ref("r") == s.tip);
  }

  TEST_CASE(
      "J3: after the parent is SIGKILLed, recover finishes the delivery interrupted with the remote_effect "
      "its journal allows; a second recover changes nothing") {
    for (const char* leg : {"GET", "POST"}) {
      CAPTURE(leg);
      Setup s;
      s.server.create_bare_repo("r");
      const bool post = std::string(leg) == "POST";
      s.server.hold(test::RequestMatch::next(leg, post ? "git-receive-pack" : "info/refs"));
      test::LineProcess cli(s.cli({"--delivery-id", "crashed"}));
      REQUIRE(s.server.wait_for_held(20'000).has_value());
      const auto r = wait_dispatched(s, "crashed");
      cli.kill_hard();
      cli.wait_exit();
      // PDEATHSIG ends the child with its parent: wait for that fact.
      REQUIRE(gone_within(test::dispatched_child_pid(r), 5'000));
      s.server.release();
      if (post) {
        // The server goes on with the POST it had read: it applies the pack.
        REQUIRE(wait_for_fact([&] { return !s.remote_ref("r").empty(); }, 5'000));
        REQUIRE(s.remote_ref("r") == s.tip);
      }
      auto rec = s.recover();
      REQUIRE_MESSAGE(rec.exit_code == 0, rec.err);
      const json out = json::parse(rec.out);
      REQUIRE(out.size() == 1);
      CHECK(out[0]["kind"] == "interrupted");
      CHECK(out[0]["delivery_id"] == "crashed");
      CHECK(out[0]["remote_effect"] == (post ? "possible" : "none"));
      if (post) {
        REQUIRE(out[0]["observed_after"].is_object());
        CHECK(out[0]["observed_after"]["oid"] == s.tip);
        CHECK(out[0]["observed_after"]["matches_this_delivery"] == true);
      }
      const auto done = s.record("crashed");
      CHECK(done.finished);
      const std::size_t entries = done.entries.size();
      auto again = s.recover();
      REQUIRE_MESSAGE(again.exit_code == 0, again.err);
      CHECK(json::parse(again.out).empty());
      CHECK(s.record("crashed").entries.size() == entries);
    }
  }

  TEST_CASE("J3: recovery never takes a reused pid for the delivery's processes (pid + start time + boot id)") {
    Setup s;
    // A delivery journalled by "this pid" with another start time: the
    // process that submitted it is gone, whatever holds the pid now. Its
    // child's pid is a live process of ours with another start time: not
    // its child, and never signalled.
    test::LineProcess bystander({"/bin/sh", "-c", "echo up; exec sleep 600"});
    REQUIRE(!bystander.wait_line("up", 5'000).empty());
    auto me = journal::identify(sys::self_pid());
    auto them = journal::identify(bystander.pid());
    REQUIRE(me.has_value());
    REQUIRE(them.has_value());
    {
      auto j = journal::open_sqlite(s.journal_path);
      REQUIRE(j.has_value());
      journal::Submission sub;
      sub.id = "reused";
      sub.repo = s.source;
      sub.remote = s.server.url("r");
      sub.lane = "lane-of-reused";
      sub.ref = "refs/heads/main";
      sub.oid = s.tip;
      sub.submitter = *me;
      sub.submitter.start_ticks += 1;
      REQUIRE((*j)->submit(sub, journal::wall_now_ms()).has_value());
      json child{{"child_pid", std::to_string(them->pid)},
                 {"child_start_ticks", std::to_string(them->start_ticks + 1)},
                 {"child_boot_id", them->boot_id}};
      REQUIRE((*j)->append("reused", {journal::Step::dispatched, 1, journal::wall_now_ms(), child.dump()}, false));
    }
    Executor ex(s.journalled());
    REQUIRE_MESSAGE(ex.recovered_at_start().has_value(), ex.recovered_at_start().error().message);
    REQUIRE(ex.recovered_at_start()->size() == 1);
    CHECK((*ex.recovered_at_start())[0].kind == OutcomeKind::interrupted);
    CHECK((*ex.recovered_at_start())[0].remote_effect == RemoteEffect::none);
    const char st = sys::proc_state(bystander.pid());
    CHECK_MESSAGE((st != 0 && st != 'Z'), "recovery killed a process that only shared a pid with the child");
  }

  TEST_CASE(
      "J3: recovery kills only a provable delivery child of this user: another user's process, or one of ours "
      "running another program, named as a child in a shared journal, is never signalled") {
    Setup s;
    // What a writer of the shared database could name: a process of
    // another user (nobody) and one of ours running another program, each
    // with its exact pid, start time and boot id. And the control: this
    // program as a delivery child is, the leader of its own process group
    // (stdin a pipe nobody writes: it waits for a job).
    test::LineProcess theirs({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c",
                              "echo $$; exec sleep 600"});
    test::LineProcess ours({"/bin/sh", "-c", "echo $$; exec sleep 600"});
    // The control, started here so nothing of it outlives the test: the
    // write end of its stdin stays with this process until the end.
    int in[2];
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    const pid_t control = ::fork();
    REQUIRE(control >= 0);
    if (control == 0) {
      ::setsid();
      ::dup2(in[0], 0);
      const int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, 1);
      ::execl(COURIER_BINARY, COURIER_BINARY, "__delivery-push", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    struct Reap {
      int writer;
      pid_t pid;
      ~Reap() {
        ::close(writer);  // its stdin ends: a control still running exits
        ::waitpid(pid, nullptr, 0);
      }
    } reap{in[1], control};
    auto pid_of = [](test::LineProcess& p) {
      const std::string line = p.wait_line("", 10'000);
      REQUIRE_FALSE(line.empty());
      return static_cast<pid_t>(std::atol(line.c_str()));
    };
    // It runs this program (exec done) and waits for its job on stdin.
    REQUIRE(wait_for_fact(
        [&] {
          struct stat bin {};
          const auto o = sys::process_owner(control);
          return o && ::stat(COURIER_BINARY, &bin) == 0 && o->exe_ino == bin.st_ino && sys::proc_state(control) == 'S';
        },
        10'000));
    const pid_t victims[] = {pid_of(theirs), pid_of(ours), control};
    const char* ids[] = {"names-nobody", "names-sleep", "names-child"};
    auto me = journal::identify(sys::self_pid());
    REQUIRE(me.has_value());
    {
      auto j = journal::open_sqlite(s.journal_path);
      REQUIRE(j.has_value());
      for (int i = 0; i < 3; ++i) {
        auto who = journal::identify(victims[i]);
        REQUIRE(who.has_value());
        journal::Submission sub;
        sub.id = ids[i];
        sub.repo = s.source;
        sub.remote = s.server.url("r");
        sub.lane = std::string("lane-") + ids[i];
        sub.ref = "refs/heads/main";
        sub.oid = s.tip;
        sub.submitter = *me;
        sub.submitter.start_ticks += 1;  // gone
        REQUIRE((*j)->submit(sub, journal::wall_now_ms()).has_value());
        json detail{{"child_pid", std::to_string(who->pid)},
                    {"child_start_ticks", std::to_string(who->start_ticks)},
                    {"child_boot_id", who->boot_id}};
        REQUIRE((*j)->append(ids[i], {journal::Step::dispatched, 1, journal::wall_now_ms(), detail.dump()}, false));
      }
    }
    auto rec = s.recover();
    REQUIRE_MESSAGE(rec.exit_code == 0, rec.err);
    const json out = json::parse(rec.out);
    auto alive = [](pid_t pid) {
      const char st = sys::proc_state(pid);
      return st != 0 && st != 'Z';
    };
    CHECK_MESSAGE(alive(victims[0]), "recovery killed another user's process because a journal named it");
    CHECK_MESSAGE(alive(victims[1]), "recovery killed a process of ours that is not a delivery child");
    CHECK_FALSE(s.record(ids[0]).finished);
    CHECK_FALSE(s.record(ids[1]).finished);
    // The control: a delivery child is still stopped and its delivery
    // finished interrupted.
    CHECK_MESSAGE(!alive(victims[2]), "recovery left a provable delivery child running");
    REQUIRE(out.size() == 1);
    CHECK(out[0]["delivery_id"] == ids[2]);
    CHECK(out[0]["kind"] == "interrupted");
  }

  TEST_CASE("J3: recovery never touches a delivery whose submitter is alive") {
    Setup s;
    s.server.create_bare_repo("r");
    s.server.hold(test::RequestMatch::next("GET", "info/refs"));
    Executor ex(s.journalled());
    auto h = ex.submit(s.with_id("alive", s.tip));
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    auto rec = s.recover();
    REQUIRE_MESSAGE(rec.exit_code == 0, rec.err);
    CHECK(json::parse(rec.out).empty());
    CHECK_FALSE(s.record("alive").finished);
    h.revoke("done");
    h.wait();
    s.server.release();
  }

  TEST_CASE("J4: a delivered id submitted again pushes nothing: the recorded outcome is replayed") {
    Setup s;
    s.server.create_bare_repo("r");
    {
      Executor ex(s.journalled());
      Outcome o = ex.submit(s.with_id("paid-42", s.tip)).wait();
      REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
      CHECK(o.remote_effect == RemoteEffect::applied);
      CHECK(has_step(s.record("paid-42"), journal::Step::answered));
    }
    const auto before = s.server.count().total;
    Executor ex(s.journalled());
    Outcome again = ex.submit(s.with_id("paid-42", s.tip)).wait();
    CHECK(again.kind == OutcomeKind::delivered);
    CHECK(again.replayed);
    CHECK(ex.spawned() == 0);
    CHECK_MESSAGE(s.server.count().total == before, "the server saw requests for a replayed delivery");
    // The same id for another object is a mistake, never a new delivery.
    Outcome other = ex.submit(s.with_id("paid-42", s.rev("HEAD~1"))).wait();
    CHECK(other.kind == OutcomeKind::failed);
    CHECK(other.reason.find("another object") != std::string::npos);
    CHECK(s.server.count().total == before);
  }

  TEST_CASE(
      "J4: an interrupted `possible` delivery is delivered again only as a compare-and-swap: a ref moved "
      "meanwhile is not clobbered") {
    Setup s;
    s.server.create_bare_repo("r");
    // Held, and once released answered 500 without running the backend:
    // the POST is never applied.
    s.server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    s.server.respond(test::RequestMatch::next("POST", "git-receive-pack"), 500);
    {
      test::LineProcess cli(s.cli({"--delivery-id", "cas"}));
      REQUIRE(s.server.wait_for_held(20'000).has_value());
      const auto r = wait_dispatched(s, "cas");
      cli.kill_hard();
      cli.wait_exit();
      REQUIRE(gone_within(test::dispatched_child_pid(r), 5'000));
    }
    // The held POST is answered 500 and never applied; someone else moves
    // the ref meanwhile.
    s.server.release();
    const std::string other = s.rev("HEAD~1");
    auto pushed = test::git({"push", "-q", s.server.repo_path("r"), other + ":refs/heads/main"}, s.source);
    REQUIRE_MESSAGE(pushed.ok(), pushed.err);
    REQUIRE(s.remote_ref("r") == other);
    auto rec = s.recover();
    REQUIRE_MESSAGE(rec.exit_code == 0, rec.err);
    REQUIRE(json::parse(rec.out).size() == 1);
    CHECK(json::parse(rec.out)[0]["remote_effect"] == "possible");
    // Again, with the same id: attempt 2, compared against the journalled
    // old id (the ref was absent), which is no longer what the remote has.
    auto again =
        test::run(s.cli({"--json", "--delivery-id", "cas"}), {}, test::Stdin::bytes, {"PATH=/usr/bin:/bin", "LANG=C"});
    const json j = json::parse(again.out);
    CHECK_MESSAGE(j["outcome"] == "rejected", again.out);
    CHECK(j["attempt"] == 2);
    CHECK(j["remote_effect"] == "none");
    CHECK(s.remote_ref("r") == other);
  }

  TEST_CASE("J4: an id in flight in another process is refused, naming that process; nothing is sent for it") {
    Setup s;
    s.server.create_bare_repo("r");
    s.server.hold(test::RequestMatch::next("GET", "info/refs"));
    test::LineProcess cli(s.cli({"--delivery-id", "busy"}));
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    const auto before = s.server.count().total;
    {
      Executor ex(s.journalled());
      Outcome o = ex.submit(s.with_id("busy", s.tip)).wait();
      CHECK_MESSAGE(o.kind == OutcomeKind::failed, o.reason);
      CHECK(o.reason.find("in flight in process " + std::to_string(cli.pid())) != std::string::npos);
      CHECK(ex.spawned() == 0);
      CHECK(s.server.count().total == before);
    }
    s.server.release();
    CHECK(cli.wait_exit() == 0);
    CHECK(s.remote_ref("r") == s.tip);
  }

  TEST_CASE("J1: a journal that cannot be used refuses the delivery before dispatch: nothing is sent") {
    for (const char* what : {"corrupt", "locked", "not a directory"}) {
      CAPTURE(what);
      Setup s;
      s.server.create_bare_repo("r");
      std::filesystem::create_directories(s.dir.path() + "/state");
      ExecutorOptions eo = s.journalled();
      std::unique_ptr<test::HeldJournalLock> lock;
      if (std::string(what) == "corrupt") {
        test::write_file(s.journal_path, std::string(8192, 'x'));
      } else if (std::string(what) == "locked") {
        {
          auto j = journal::open_sqlite(s.journal_path);
          REQUIRE(j.has_value());
        }
        lock = std::make_unique<test::HeldJournalLock>(s.journal_path);
      } else {
        test::write_file(s.dir.path() + "/file", "x");
        eo.journal = s.dir.path() + "/file/journal.sqlite";
      }
      Executor ex(eo);
      Outcome o = ex.submit(s.with_id("refused", s.tip)).wait();
      CHECK_MESSAGE(o.kind == OutcomeKind::failed, o.reason);
      CHECK(o.reason.find("journal") != std::string::npos);
      CHECK_FALSE(o.dispatched);
      CHECK(ex.spawned() == 0);
      CHECK(s.server.count().total == 0);
    }
  }

  TEST_CASE("J2: the CLI's --json and its log and show tell the journal's story of a delivered push") {
    Setup s;
    s.server.create_bare_repo("r");
    auto r = test::run(s.cli({"--json", "--delivery-id", "story"}), {}, test::Stdin::bytes,
                       {"PATH=/usr/bin:/bin", "LANG=C"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const json j = json::parse(r.out);
    CHECK(j["remote_effect"] == "applied");
    CHECK(j["delivery_id"] == "story");
    CHECK(j["bytes_sent"].get<std::uint64_t>() > 0);
    CHECK((j["kill_domain"] == "cgroup" || j["kill_domain"] == "process_group"));
    auto log =
        test::run({COURIER_BINARY, "log", "--journal", s.journal_path}, {}, test::Stdin::bytes, {"PATH=/usr/bin:/bin"});
    REQUIRE(log.exit_code == 0);
    CHECK(log.out.find("story") != std::string::npos);
    CHECK(log.out.find("delivered") != std::string::npos);
    auto show = test::run({COURIER_BINARY, "show", "story", "--journal", s.journal_path, "--json"}, {},
                          test::Stdin::bytes, {"PATH=/usr/bin:/bin"});
    REQUIRE(show.exit_code == 0);
    // dispatched is written off the supervising loop, so its place among
    // the child's own steps is not fixed; every other step is in order.
    std::vector<std::string> seen;
    bool dispatched = false;
    const json shown = json::parse(show.out);
    for (const auto& t : shown["transitions"]) {
      if (t["step"] == "dispatched") {
        dispatched = true;
      } else {
        seen.push_back(t["step"]);
      }
    }
    CHECK_MESSAGE(dispatched, show.out);
    const std::vector<std::string> expected = {"submitted",    "claimed",  "advertised",
                                               "post_started", "answered", "finished"};
    CHECK(seen == expected);
  }
}

}  // namespace integration_journal_e2e
