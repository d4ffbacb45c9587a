// outcome-json.cpp — the outcome document (src/report/outcome_json.*):
// what `push --json` prints and the service answers is read back by
// `push --via` into an outcome that prints the same document, the same
// human line, hint and exit code; the journal's form of it, the outcome
// table and the event table (src/report/event_json.*). No process, no
// clock of its own.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <sstream>

#include "cli/args.hpp"
#include "cli/output.hpp"
#include "cli/via_answer.hpp"
#include "journal/journal.hpp"
#include "report/event_json.hpp"
#include "report/outcome_json.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_outcome_json {

using namespace courier;
using courier::MonoNs;
using courier::report::OutcomeFacts;

namespace {

constexpr MonoNs kMs = 1'000'000;
const std::string kOid = "0123456789abcdef0123456789abcdef01234567";
const std::string kOld = "89abcdef0123456789abcdef0123456789abcdef";

// Instants as a real run has them: not whole milliseconds.
Timings ran(MonoNs base) {
  Timings t;
  t.submitted = base;
  t.seat = base + 3 * kMs + 417;
  t.spawned = t.seat + 120'000;
  t.hello = t.seat + 21 * kMs + 999'999;
  t.exited = base + 240 * kMs + 12;
  t.reaped = t.exited + 5'000;
  t.confirmed = t.exited + 1 * kMs + 731'000;
  return t;
}

ChildFacts child(std::int64_t pid) {
  ChildFacts c;
  c.pid = pid;
  c.exit_code = 0;
  c.reaped = true;
  c.stdout_eof = true;
  c.stderr_eof = true;
  c.subreaped = true;
  return c;
}

Outcome delivered() {
  Outcome o;
  o.kind = OutcomeKind::delivered;
  o.reason = "remote said ok";
  o.delivery_id = "d-1";
  o.remote_effect = RemoteEffect::applied;
  o.kill_domain = "cgroup";
  o.dispatched = true;
  o.child = child(4242);
  o.timings = ran(7'000'000'123'456);
  o.old_oid = kOld;
  o.objects = 3;
  o.bytes_sent = 1234;
  o.pack_engine = "libgit2";
  o.advertise_ms = 12;
  o.pack_ms = 4;
  o.upload_ms = 9;
  o.remote_messages = {"Resolving deltas: 100% (2/2)", "caf\\xc3\\xa9 is open"};
  return o;
}

Outcome up_to_date() {
  Outcome o;
  o.kind = OutcomeKind::up_to_date;
  o.reason = "already there";
  o.delivery_id = "d-2";
  o.attempt = 2;
  o.timings.submitted = 9 * kMs + 1;
  o.timings.seat = 11 * kMs;
  o.timings.confirmed = 30 * kMs + 7;
  o.old_oid = kOid;
  return o;
}

Outcome rejected_by_remote() {
  Outcome o = delivered();
  o.kind = OutcomeKind::rejected;
  o.reason = "non-fast-forward";
  o.remote_effect = RemoteEffect::refused;
  o.remote_messages_dropped = 17;
  o.child.subreaped = false;
  return o;
}

Outcome killed_at_deadline() {
  Outcome o = delivered();
  o.kind = OutcomeKind::deadline_killed;
  o.reason = "the deadline (2000 ms) passed while packing";
  o.remote_effect = RemoteEffect::none;
  o.bytes_sent.reset();
  o.pack_engine = "git";
  o.child.exit_code.reset();
  o.child.signal = 9;
  o.deadline = o.timings.submitted + 2000 * kMs;
  o.timings.kill = o.deadline + 1'234'567;
  o.timings.exited = o.timings.kill + 300'000;
  o.timings.confirmed = o.timings.exited + 2 * kMs + 5;
  return o;
}

Outcome revoked_possible() {
  Outcome o = delivered();
  o.kind = OutcomeKind::revoked;
  o.reason = "revoked: interrupted (SIGINT)";
  o.revoke_cause = "interrupted (SIGINT)";
  o.revoked_by = RevokeCause::caller;
  o.remote_effect = RemoteEffect::possible;
  o.timings.revoke = o.timings.submitted + 100 * kMs + 3;
  o.timings.kill = o.timings.revoke + 10'000;
  o.observed_after = ObservedAfter{kOid, 1'764'626'400'123, true, ""};
  o.journal_error = "disk I/O error";
  return o;
}

Outcome cancel_uncertain() {
  Outcome o = delivered();
  o.kind = OutcomeKind::cancel_uncertain;
  o.reason = "the leader did not exit within 500 ms";
  o.stop_failure = OutcomeKind::unreaped;
  o.scratch_kept = "/tmp/courier-scratch-x";
  o.remote_effect = RemoteEffect::none;
  o.child.reaped = false;
  o.child.stderr_eof = false;
  o.timings.confirmed = 0;  // never confirmed: the total runs to now
  o.timings.revoke = o.timings.submitted + 50 * kMs;
  return o;
}

Outcome interrupted_replayed() {
  Outcome o;
  o.kind = OutcomeKind::interrupted;
  o.reason = "found unfinished after its parent died (caf\xc3\xa9)";
  o.delivery_id = "d-7";
  o.replayed = true;
  o.remote_effect = RemoteEffect::possible;
  o.observed_after = ObservedAfter{"", 1'764'626'400'999, false, "the remote could not be reached"};
  return o;
}

Outcome cancelled() {
  Outcome o;
  o.kind = OutcomeKind::cancelled_no_dispatch;
  o.reason = "revoked before dispatch";
  o.revoke_cause = "interrupted (SIGINT)";
  o.revoked_by = RevokeCause::caller;
  o.delivery_id = "d-8";
  o.timings.submitted = 1;
  o.timings.revoke = 2 * kMs;
  o.timings.confirmed = 3 * kMs;
  return o;
}

struct Case {
  const char* name;
  Outcome outcome;
  std::string auth;
};

std::vector<Case> cases() {
  return {{"delivered", delivered(), "none"},
          {"up_to_date", up_to_date(), "none"},
          {"rejected by the remote", rejected_by_remote(), "none"},
          {"deadline_killed", killed_at_deadline(), "none"},
          {"revoked with a possible effect and a read-back", revoked_possible(), "none"},
          {"cancel_uncertain, never confirmed", cancel_uncertain(), "none"},
          {"interrupted, replayed, a failed read-back", interrupted_replayed(), "none"},
          {"cancelled_no_dispatch", cancelled(), "none"},
          {"auth_failed with a hint",
           [] {
             Outcome o = delivered();
             o.kind = OutcomeKind::auth_failed;
             o.reason = "the advertisement GET answered 401";
             return o;
           }(),
           "key:/etc/key"}};
}

}  // namespace

TEST_CASE("service API: an outcome document read back prints the same document, line, hint and exit code") {
  for (const auto& c : cases()) {
    CAPTURE(std::string(c.name));
    const cli::DeliveryFacts facts{"https://git.example/repo.git", "refs/heads/main", kOid, c.auth, std::nullopt};
    const std::string first = cli::json_report(c.outcome, facts);
    auto decoded = report::outcome_from_json(std::string_view(first));
    REQUIRE_MESSAGE(decoded, std::string(decoded ? "" : decoded.error().message));
    const Outcome& o = decoded->outcome;
    CHECK(o.kind == c.outcome.kind);
    CHECK(o.remote_effect == c.outcome.remote_effect);
    CHECK(o.delivery_id == c.outcome.delivery_id);
    CHECK(decoded->facts.remote == facts.remote);
    CHECK(decoded->facts.ref == facts.ref);
    CHECK(decoded->facts.oid == facts.oid);
    // The client prints with the facts the document gives, its hint as told.
    const cli::DeliveryFacts told{decoded->facts.remote, decoded->facts.ref, decoded->facts.oid, "",
                                  decoded->facts.hint.value_or("")};
    CHECK(cli::json_report(o, told) == first);
    CHECK(cli::human_line(o, told) == cli::human_line(c.outcome, facts));
    CHECK(cli::hint_for(o, told) == cli::hint_for(c.outcome, facts));
    CHECK(cli::exit_code_for(o.kind) == cli::exit_code_for(c.outcome.kind));
    CHECK(o.seat() == c.outcome.seat());
    CHECK(o.deadline_overrun() == c.outcome.deadline_overrun());
  }
}

TEST_CASE("service API: the document's hint is the one shown, and an auth failure's hint survives the trip") {
  Outcome o = delivered();
  o.kind = OutcomeKind::auth_failed;
  o.reason = "the advertisement GET answered 401";
  const cli::DeliveryFacts facts{"https://git.example/r.git", "refs/heads/main", kOid, "none", std::nullopt};
  const std::string hint = cli::hint_for(o, facts);
  REQUIRE(!hint.empty());
  auto decoded = report::outcome_from_json(std::string_view(cli::json_report(o, facts)));
  REQUIRE(decoded);
  CHECK(decoded->facts.hint == hint);
  const OutcomeFacts none{"https://git.example/r.git", "refs/heads/main", kOid, std::nullopt};
  auto without = report::outcome_from_json(report::outcome_to_json(delivered(), none));
  REQUIRE(without);
  CHECK_FALSE(without->facts.hint.has_value());
}

TEST_CASE("service API: text that is not UTF-8 is replaced once, and the document stays the same after") {
  Outcome o = cancelled();
  o.reason = "a byte \xff that is not UTF-8";
  const OutcomeFacts facts{"https://git.example/r.git", "refs/heads/main", kOid, std::nullopt};
  const std::string first = report::outcome_json(o, facts);
  auto decoded = report::outcome_from_json(std::string_view(first));
  REQUIRE(decoded);
  CHECK(decoded->outcome.reason == "a byte \xef\xbf\xbd that is not UTF-8");
  CHECK(report::outcome_json(decoded->outcome, decoded->facts) == first);
}

TEST_CASE("service API: a malformed outcome document is refused, naming the field") {
  const OutcomeFacts facts{"https://git.example/r.git", "refs/heads/main", kOid, std::nullopt};
  auto doc = report::outcome_to_json(delivered(), facts);
  SUBCASE("not JSON") {
    auto r = report::outcome_from_json(std::string_view("{\"outcome\":"));
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("not JSON") != std::string::npos);
  }
  SUBCASE("an unknown outcome") {
    doc["outcome"] = "teleported";
    auto r = report::outcome_from_json(doc);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("outcome.outcome: unknown name 'teleported'") != std::string::npos);
  }
  SUBCASE("a missing field") {
    doc.erase("remote_effect");
    auto r = report::outcome_from_json(doc);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("outcome.remote_effect is missing") != std::string::npos);
  }
  SUBCASE("a nested field of the wrong type") {
    doc["child"]["pid"] = "4242";
    auto r = report::outcome_from_json(doc);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("outcome.child.pid is not an integer") != std::string::npos);
  }
  SUBCASE("not an object") {
    auto r = report::outcome_from_json(nlohmann::json::array());
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("not a JSON object") != std::string::npos);
  }
}

TEST_CASE(
    "J4 J5: the human line's advice after `possible` follows the id table: a compare-and-swap under the same id "
    "after a failure, a new id after the caller's cancellation") {
  const cli::DeliveryFacts facts{"https://git.example/r.git", "refs/heads/main", kOid, "none", std::nullopt};
  Outcome o = delivered();
  o.delivery_id = "order-1";
  o.remote_effect = RemoteEffect::possible;
  o.old_oid = std::string(40, '1');
  o.kind = OutcomeKind::deadline_killed;
  o.reason = "killed at the deadline";
  const std::string after_deadline = cli::human_line(o, facts);
  CHECK_MESSAGE(after_deadline.find("deliver again with the same --delivery-id order-1") != std::string::npos,
                after_deadline);
  CHECK(after_deadline.find("new --delivery-id") == std::string::npos);
  o.kind = OutcomeKind::revoked;
  o.revoked_by = RevokeCause::caller;
  const std::string after_cancel = cli::human_line(o, facts);
  CHECK_MESSAGE(
      after_cancel.find("the cancellation is final: a new attempt needs a new --delivery-id") != std::string::npos,
      after_cancel);
  CHECK(after_cancel.find("with the same --delivery-id") == std::string::npos);
  o.revoked_by = RevokeCause::lease_lost;
  CHECK(cli::human_line(o, facts).find("deliver again with the same --delivery-id order-1") != std::string::npos);
}

TEST_CASE("S3: every outcome kind is one row with a distinct word, the release rule's seat and an exit code") {
  std::set<std::string_view> words;
  std::set<int> exits;
  for (const auto& e : kExitCodeRows) exits.insert(exit_value(e.code));
  CHECK(exits.size() == std::size(kExitCodeRows));
  std::size_t i = 0;
  for (const auto& row : kOutcomeRows) {
    CAPTURE(row.word);
    CHECK(static_cast<std::size_t>(row.kind) == i++);
    CHECK_FALSE(row.word.empty());
    CHECK(words.insert(row.word).second);
    CHECK(outcome_name(row.kind) == row.word);
    CHECK(outcome_from_name(std::string(row.word)) == row.kind);
    CHECK(exits.count(cli::exit_code_for(row.kind)) == 1);
    CHECK(cli::exit_code_for(row.kind) != cli::kExitUsage);
    CHECK(cli::exit_code_for(row.kind) != cli::kExitMismatch);
    CHECK(release_rule(row.kind) == row.seat);
    CHECK(is_unconfirmed(row.kind) == (row.seat == SeatDisposition::retain));
    // A kind whose seat is retained exits "unconfirmed", whatever else it is.
    if (row.seat == SeatDisposition::retain) CHECK(cli::exit_code_for(row.kind) == cli::kExitUnconfirmed);
    CHECK_FALSE(row.summary.empty());
  }
  CHECK_FALSE(outcome_from_name("teleported").has_value());
}

TEST_CASE("S3: the operations guide's outcome table gives each kind the seat and exit code of its row") {
  const std::string guide = test::read_file(test::source_path("docs/operations.md"));
  // "| `a`, `b` | seat | meaning | what to do | exit |": the rows of the
  // table under "| outcome | seat |", by the kinds their first cell names.
  std::map<std::string, std::string, std::less<>> line_of;
  std::istringstream in(guide);
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| outcome | seat |", 0) == 0) in_table = true;
    if (!in_table) continue;
    if (line.rfind('|', 0) != 0) break;
    const std::string first = line.substr(0, line.find(" | ", 1));
    for (const auto& row : kOutcomeRows) {
      if (first.find("`" + std::string(row.word) + "`") != std::string::npos) line_of[std::string(row.word)] = line;
    }
  }
  for (const auto& row : kOutcomeRows) {
    CAPTURE(row.word);
    const auto it = line_of.find(row.word);
    REQUIRE_MESSAGE(it != line_of.end(), "docs/operations.md has no row for the kind");
    const std::string& line = it->second;
    const std::string exit = " " + std::to_string(cli::exit_code_for(row.kind)) + " |";
    const bool ends_with_exit =
        line.size() >= exit.size() && line.compare(line.size() - exit.size(), exit.size(), exit) == 0;
    CHECK_MESSAGE(ends_with_exit, line);
    const bool retained = line.find("| **retained** |") != std::string::npos;
    CHECK_MESSAGE(retained == (row.seat == SeatDisposition::retain), line);
  }
}

TEST_CASE("J2 J4 via: an outcome round-trips through the journal codec and the --via decoders unchanged") {
  const OutcomeFacts facts{"https://git.example/r.git", "refs/heads/main", kOid, std::nullopt};
  for (const auto& c : cases()) {
    CAPTURE(std::string(c.name));
    // The journal: the finished entry's detail reads back to the same detail.
    const std::string detail = journal::outcome_detail(c.outcome);
    auto stored = journal::outcome_from_detail(detail);
    REQUIRE_MESSAGE(stored, std::string(stored ? "" : stored.error().message));
    CHECK(journal::outcome_detail(*stored) == detail);
    CHECK(stored->kind == c.outcome.kind);
    CHECK(stored->remote_effect == c.outcome.remote_effect);
    CHECK(stored->revoked_by == c.outcome.revoked_by);
    // The service: that outcome as the events' last line, as a replayed
    // submission's answer; `push --via` reads both back to the same document.
    const std::string doc = report::outcome_json(*stored, facts);
    nlohmann::json line = report::finished_event(report::outcome_to_json(*stored, facts));
    line["seq"] = 7;
    auto event = cli::read_event_line(line.dump());
    REQUIRE(event.has_value());
    CHECK(event->seq == 7);
    CHECK(event->kind == DeliveryEvent::Kind::finished);
    REQUIRE(event->outcome.has_value());
    REQUIRE(*event->outcome);
    CHECK(report::outcome_json((*event->outcome)->outcome, (*event->outcome)->facts) == doc);
    const nlohmann::json answer = {{"id", c.outcome.delivery_id.empty() ? "d" : c.outcome.delivery_id},
                                   {"state", "finished"},
                                   {"replayed", true},
                                   {"outcome", nlohmann::json::parse(doc)}};
    auto replayed = cli::read_submit_answer(200, answer.dump());
    REQUIRE(replayed);
    REQUIRE(replayed->replayed.has_value());
    CHECK(report::outcome_json(replayed->replayed->outcome, replayed->replayed->facts) == doc);
    // What --via decoded is what the journal held: its detail is the same.
    Outcome told = (*event->outcome)->outcome;
    if (!stored->objects) told.objects.reset();  // the document says 0 for "none counted"
    CHECK(journal::outcome_detail(told) == detail);
  }
}

TEST_CASE(
    "J4 J5: the journal's form of an outcome is the one journals have always held, its revocation's cause included") {
  CHECK(
      journal::outcome_detail(cancelled()) ==
      R"J({"attempt":1,"delivery_id":"d-8","dispatched":false,"journal_error":"","kill_domain":"",)J"
      R"J("kind":"cancelled_no_dispatch","reason":"revoked before dispatch","remote_effect":"none",)J"
      R"J("revoke_cause":"interrupted (SIGINT)","revoke_unjournalled":false,"revoked_by":"caller","scratch_kept":""})J");
  // A row written before causes were named: the cause is read from its words.
  auto old = journal::outcome_from_detail(
      R"J({"kind":"revoked","remote_effect":"none","revoke_cause":"lease_lost: renewal failed"})J");
  REQUIRE(old);
  CHECK(old->revoked_by == RevokeCause::lease_lost);
  // Lenient on what it lacks, strict on what it must know.
  auto unknown = journal::outcome_from_detail(R"J({"kind":"teleported","remote_effect":"none"})J");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message == "a finished entry's detail is not an outcome: no known kind ('teleported')");
  auto not_json = journal::outcome_from_detail("{");
  REQUIRE_FALSE(not_json);
  CHECK(not_json.error().message == "a finished entry's detail is not an outcome: it is not valid JSON");
}

TEST_CASE("X-SVC5: every event is one row, written and read back the same") {
  DeliveryEvent pending;
  pending.kind = DeliveryEvent::Kind::pending;
  pending.holder = "pid 42 (git-courier push)";
  pending.holder_pid = 42;
  pending.holder_delivery = 3;
  DeliveryEvent granted;
  granted.kind = DeliveryEvent::Kind::seat_granted;
  DeliveryEvent dispatched;
  dispatched.kind = DeliveryEvent::Kind::dispatched;
  dispatched.child_pid = 4711;
  DeliveryEvent meter;
  meter.kind = DeliveryEvent::Kind::progress;
  meter.phase = "writing";
  meter.done = 5;
  meter.total = 9;
  DeliveryEvent remote;
  remote.kind = DeliveryEvent::Kind::progress;
  remote.phase = "remote";
  remote.text = "hook says hi";
  const std::vector<std::pair<DeliveryEvent, std::string>> table = {
      {pending, R"J({"event":"pending","holder":"pid 42 (git-courier push)","holder_delivery":3,"holder_pid":42})J"},
      {granted, R"J({"event":"seat_granted"})J"},
      {dispatched, R"J({"child_pid":4711,"event":"dispatched"})J"},
      {meter, R"J({"done":5,"event":"progress","phase":"writing","total":9})J"},
      {remote, R"J({"event":"remote","text":"hook says hi"})J"}};
  for (const auto& [e, text] : table) {
    CAPTURE(text);
    nlohmann::json j = report::event_to_json(e);
    CHECK(j.dump() == text);
    j["seq"] = 2;
    auto back = cli::read_event_line(j.dump());
    REQUIRE(back.has_value());
    CHECK(back->kind == e.kind);
    CHECK(report::event_to_json(back->event).dump() == text);
  }
  auto queued = cli::read_event_line(R"J({"seq":1,"event":"queued"})J");
  REQUIRE(queued.has_value());
  CHECK_FALSE(queued->kind.has_value());
  CHECK(queued->name == report::kQueuedEvent);
  CHECK(report::queued_event().dump() == R"J({"event":"queued"})J");
  auto newer = cli::read_event_line(R"J({"seq":2,"event":"teleporting","text":"x"})J");
  REQUIRE(newer.has_value());
  CHECK_FALSE(newer->kind.has_value());
}

}  // namespace unit_outcome_json
