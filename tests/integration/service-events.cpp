// service-events.cpp — the service's states and event lines as an operator
// and `push --via` rely on them: numbered from the journal (Q3), so that a
// cursor resumes after a SIGKILL and restart and a stale generation is
// detected; `push --via` following a delivery through that crash to its
// outcome; `stopping` and `revoke_requested` between DELETE and the outcome;
// a SIGTERM drain that still sends each follower its `finished` line; and
// docs/service.md's tables of states and events, read against the code's.
// The shipped binary, curl over its Unix socket, the TLS fixture server in
// front of git http-backend; every wait is on a fact (a held request
// announced, a log line, a journal entry, a stream's line, a process's exit).
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "journal/journal.hpp"
#include "report/event_json.hpp"
#include "service/event_numbering.hpp"
#include "service_support.hpp"
#include "support.hpp"
#include "sys/clock.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_service_events {

using namespace courier;
using nlohmann::json;
using sys::kNsPerMs;

namespace {

using test::gone_within;

int exit_of(OutcomeKind k) { return exit_value(outcome_row(k).exit); }

struct Scene : test::ServiceScene {
  json body(const std::string& id) const {
    return {{"id", id}, {"repo", source}, {"remote", fx.url("r")}, {"ref", "refs/heads/main"}, {"oid", tip}};
  }
  // `git-courier push --via` of the same delivery, --json; its stderr
  // joined to its stdout (the lines a test reads).
  std::vector<std::string> via(const std::string& socket, const std::string& id, const std::string& deadline) const {
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" 2>&1", "sh"};
    for (auto& a : test::clean_env_argv({COURIER_BINARY, "push", "--via", socket, "--repo", source, "--remote",
                                         fx.url("r"), "--ref", "refs/heads/main", "--oid", tip, "--delivery-id", id,
                                         "--deadline", deadline, "--json"})) {
      argv.push_back(a);
    }
    return argv;
  }
  // The delivery's event lines as curl reads them while they come (-N).
  std::unique_ptr<test::LineProcess> follow(const std::string& socket, const std::string& id) const {
    return std::make_unique<test::LineProcess>(std::vector<std::string>{
        "/usr/bin/curl", "-sSN", "--unix-socket", socket, "http://courier/v1/deliveries/" + id + "/events"});
  }
};

std::vector<json> parsed(const std::vector<std::string>& lines) {
  std::vector<json> out;
  for (const auto& l : lines) {
    json j = json::parse(l, nullptr, false);
    if (j.is_object() && j.contains("seq")) out.push_back(j);
  }
  return out;
}

const json* line_of(const std::vector<json>& lines, const std::string& event) {
  for (const auto& l : lines) {
    if (l["event"] == event) return &l;
  }
  return nullptr;
}

std::string text_of(const std::vector<json>& lines) {
  std::string out;
  for (const auto& l : lines) out += l.dump() + "\n";
  return out;
}

// A markdown table's rows under `heading` (its first column, and its second),
// backquotes dropped from the first.
std::vector<std::pair<std::string, std::string>> table_under(const std::string& doc, const std::string& heading) {
  std::vector<std::pair<std::string, std::string>> rows;
  const auto at = doc.find("\n" + heading + "\n");
  REQUIRE_MESSAGE(at != std::string::npos, "docs/service.md has no heading " << heading);
  std::istringstream in(doc.substr(at + heading.size() + 2));
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream cs(line.substr(1));
    while (std::getline(cs, cell, '|')) cells.push_back(cell);
    if (cells.size() < 2 || cells[0].find("---") != std::string::npos) continue;
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(" `"));
      s.erase(s.find_last_not_of(" `") + 1);
      return s;
    };
    rows.emplace_back(trim(cells[0]), cells[1]);
  }
  REQUIRE(rows.size() > 1);
  rows.erase(rows.begin());  // the header
  return rows;
}

// The backquoted names in a cell, in order.
std::vector<std::string> names_in(const std::string& cell) {
  std::vector<std::string> out;
  for (auto at = cell.find('`'); at != std::string::npos; at = cell.find('`', at + 1)) {
    const auto end = cell.find('`', at + 1);
    if (end == std::string::npos) break;
    out.push_back(cell.substr(at + 1, end - at - 1));
    at = end;
  }
  return out;
}

}  // namespace

TEST_SUITE("service-events") {
  TEST_CASE(
      "Q3 J3: a push --via held at its POST, the service SIGKILLed and started again: the client prints interrupted, "
      "possible and exits with that outcome's code within the restart plus the read-back budget plus 2 s; the "
      "events go on numbered from the journal, and a cursor of another generation starts the stream again") {
    Scene s;
    auto svc = s.start();
    s.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    test::LineProcess client(s.via(svc->socket(), "via-held", "30s"));
    REQUIRE_MESSAGE(s.fx.wait_for_held(30'000).has_value(), svc->log());
    // The live stream as a follower had it before the crash.
    auto live_follow = s.follow(svc->socket(), "via-held");
    REQUIRE_FALSE(live_follow->wait_line("{\"child_pid\"", 10'000).empty());
    const auto held = test::journalled(svc->journal(), "via-held");
    REQUIRE(held->last(journal::Step::post_started).has_value());
    const std::int64_t child = test::dispatched_child_pid(*held);
    REQUIRE(child > 0);
    svc->crash();
    REQUIRE(gone_within(child, 5'000));
    REQUIRE(live_follow->wait_exit() != -1);
    const std::vector<json> live = parsed(live_follow->lines());
    INFO("live stream before the crash:\n" << text_of(live));
    REQUIRE(line_of(live, "queued") != nullptr);
    REQUIRE(line_of(live, "dispatched") != nullptr);
    const std::uint64_t live_last = live.back()["seq"].get<std::uint64_t>();
    const std::string gen = live.back()["gen"].get<std::string>();

    const sys::MonoNs restart = sys::mono_now_ns();
    svc = s.start();
    const sys::MonoNs listening = sys::mono_now_ns();
    // The same transitions, rebuilt from the journal, have the same numbers.
    // Read first (the whole stream ends with the recovered outcome): the
    // client resumes from its cursor by these numbers, and with one wrong it
    // would wait out its deadline plus the stream's grace before it exits.
    // (The client's exit is then timed after this read: later, never
    // earlier, than it was.)
    const std::vector<json> after = svc->events("via-held");
    INFO("the stream after the restart:\n" << text_of(after));
    REQUIRE(line_of(after, "finished") != nullptr);
    const bool same_queued = (*line_of(after, "queued"))["seq"] == (*line_of(live, "queued"))["seq"];
    CHECK_MESSAGE(same_queued, "Q3: the queued line has the same seq live and rebuilt from the journal");
    const bool same_dispatched = (*line_of(after, "dispatched"))["seq"] == (*line_of(live, "dispatched"))["seq"];
    CHECK_MESSAGE(same_dispatched, "Q3: the dispatched line has the same seq live and rebuilt from the journal");
    const std::uint64_t finished_seq = (*line_of(after, "finished"))["seq"].get<std::uint64_t>();
    CHECK_MESSAGE(finished_seq > live_last, "Q3: the line after the restart is numbered above every earlier one");
    REQUIRE_MESSAGE((same_queued && same_dispatched && finished_seq > live_last),
                    "the numbers the client resumes by are wrong: its wait would prove nothing more");
    const int code = client.wait_exit();
    const sys::MonoNs exited = sys::mono_now_ns();
    const auto restart_ms = (listening - restart) / kNsPerMs;
    const auto client_ms = (exited - restart) / kNsPerMs;
    MESSAGE("restart (start to listening, recovery and its read-back included): "
            << restart_ms << " ms; the client's exit: " << client_ms << " ms after it");
    std::string out;
    for (const auto& l : client.lines()) {
      if (l.rfind("{", 0) == 0) out = l;
    }
    INFO("client:\n"
         <<
         [&] {
           std::string all;
           for (const auto& l : client.lines()) all += l + "\n";
           return all;
         }()
         << "service:\n"
         << svc->log());
    const json o = json::parse(out, nullptr, false);
    REQUIRE(o.is_object());
    CHECK(o["outcome"] == "interrupted");
    CHECK(o["remote_effect"] == "possible");
    CHECK(o["observed_after"].is_object());
    CHECK(code == exit_of(OutcomeKind::interrupted));
    CHECK(client_ms <= restart_ms + kReadBackBudget.count() + 2'000);

    CHECK(finished_seq % service::kSeqStep == 0);
    // A cursor resumes after the restart: only what came after it.
    test::Http resumed = svc->get("/v1/deliveries/via-held/events?after=" + gen + ":" + std::to_string(live_last));
    const auto resumed_lines = test::lines_of(resumed.raw);
    REQUIRE(resumed_lines.size() == 1);
    CHECK(resumed_lines[0]["event"] == "finished");
    CHECK(svc->get("/v1/deliveries/via-held/events?after=" + std::to_string(finished_seq)).raw.empty());
    // A cursor of another generation (a boot that may have lost unsynced
    // entries) is stale: the stream starts again from the first event.
    const std::string other = gen == "abcdef" ? "fedcba" : "abcdef";
    test::Http stale = svc->get("/v1/deliveries/via-held/events?after=" + other + ":" + std::to_string(finished_seq));
    const auto stale_lines = test::lines_of(stale.raw);
    REQUIRE_FALSE(stale_lines.empty());
    CHECK_MESSAGE(stale_lines.front()["event"] == "queued", "Q3: a stale generation starts the stream again");
    CHECK(stale_lines.front()["gen"] == gen);
    for (const std::string bad : {"x1", "12:", "abc:1:2", "9007199254740993", "00000000000000000000000000000000f:1"}) {
      test::Http b = svc->get("/v1/deliveries/via-held/events?after=" + bad);
      CHECK_MESSAGE(b.status == 400, bad);
      CHECK(b.body["error"]["field"] == "after");
    }
    s.fx.release();
    CHECK(svc->stop() == 0);
  }

  TEST_CASE(
      "J4 D1: a delivery dispatched but held at its advertisement when the service is SIGKILLed is resumed by the "
      "started service itself: its next attempt, the same id and first deadline, delivered once") {
    Scene s;
    std::int64_t first_deadline = 0;
    {
      auto svc = s.start();
      s.fx.hold(test::RequestMatch::next("GET", "info/refs"));
      test::Http p = svc->post(s.body("adv-held"));
      REQUIRE_MESSAGE(p.status == 202, p.raw);
      REQUIRE_MESSAGE(s.fx.wait_for_held(30'000).has_value(), svc->log());
      const auto rec = test::journalled(svc->journal(), "adv-held");
      REQUIRE(rec->last(journal::Step::claimed).has_value());
      REQUIRE_FALSE(rec->last(journal::Step::post_started).has_value());
      first_deadline = rec->submission.deadline_unix_ms;
      const std::int64_t child = test::dispatched_child_pid(*rec);
      svc->crash();
      if (child > 0) REQUIRE(gone_within(child, 5'000));
    }
    s.fx.reset_faults();
    s.fx.release();
    auto svc = s.start();
    const auto events = svc->events("adv-held");
    INFO("events:\n" << text_of(events) << "service:\n" << svc->log());
    REQUIRE_FALSE(events.empty());
    const json& last = events.back();
    CHECK(last["event"] == "finished");
    CHECK(last["outcome"]["outcome"] == "delivered");
    CHECK(last["outcome"]["attempt"] == 2);
    const auto rec = test::journalled(svc->journal(), "adv-held");
    CHECK(rec->submission.deadline_unix_ms == first_deadline);
    CHECK(s.fx.count().count("POST /r.git/git-receive-pack") == 1);
    // The first attempt's entries count: attempt 2's lines are above them.
    CHECK(events.front()["seq"].get<std::uint64_t>() > 2 * service::kSeqStep);
    CHECK(svc->stop() == 0);
  }

  TEST_CASE(
      "Q3 J1: DELETE of a running delivery answers stopping (or finished once its outcome is in), and its events "
      "show revoke_requested with cause caller, numbered from its journal entry, before finished") {
    Scene s;
    auto svc = s.start();
    s.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    test::Http p = svc->post(s.body("to-revoke"));
    REQUIRE_MESSAGE(p.status == 202, p.raw);
    REQUIRE_MESSAGE(s.fx.wait_for_held(30'000).has_value(), svc->log());
    auto follow = s.follow(svc->socket(), "to-revoke");
    REQUIRE_FALSE(follow->wait_line("{\"child_pid\"", 10'000).empty());
    CHECK(svc->get("/v1/deliveries/to-revoke").body["state"] == "running");
    test::Http d = test::curl(svc->socket(), "DELETE", "/v1/deliveries/to-revoke");
    INFO("DELETE: " << d.raw << "service:\n" << svc->log());
    REQUIRE(d.status == 200);
    CHECK(d.body["result"] == "stopping");
    CHECK(d.body["state"] == (d.body["outcome"].is_null() ? "stopping" : "finished"));
    REQUIRE(follow->wait_exit() != -1);
    const std::vector<json> lines = parsed(follow->lines());
    INFO("events:\n" << text_of(lines));
    REQUIRE(line_of(lines, "revoke_requested") != nullptr);
    REQUIRE(line_of(lines, "finished") != nullptr);
    const json& revoke = *line_of(lines, "revoke_requested");
    CHECK(revoke["cause"] == "caller");
    CHECK(revoke["seq"].get<std::uint64_t>() < (*line_of(lines, "finished"))["seq"].get<std::uint64_t>());
    CHECK(lines.back()["event"] == "finished");
    CHECK(lines.back()["outcome"]["outcome"] == "revoked");
    const auto rec = test::journalled(svc->journal(), "to-revoke");
    const auto k = service::entry_ordinal(*rec, journal::Step::revoke_requested);
    REQUIRE(k.has_value());
    CHECK_MESSAGE(revoke["seq"] == *k * service::kSeqStep, "Q3: revoke_requested is numbered from its journal entry");
    CHECK(svc->get("/v1/deliveries/to-revoke").body["state"] == "finished");
    s.fx.release();
    CHECK(svc->stop() == 0);
  }

  TEST_CASE(
      "X-SVC6: SIGTERM while the server holds a --via upload (its whole body read): the drain revokes it and the "
      "client still gets the finished line (revoked, possible) and exits with revoked's code, never waiting for a "
      "service that is gone") {
    Scene s;
    auto svc = s.start({"--drain-timeout", "1s"});
    s.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    test::LineProcess client(s.via(svc->socket(), "via-term", "20s"));
    const auto held = s.fx.wait_for_held(30'000);
    REQUIRE_MESSAGE(held.has_value(), svc->log());
    // Many followers, each with the dispatched line: a stop that closes the
    // connections without waiting for their last lines cuts some of them.
    std::vector<std::unique_ptr<test::LineProcess>> followers;
    for (int i = 0; i < 24; ++i) {
      followers.push_back(s.follow(svc->socket(), "via-term"));
      REQUIRE_FALSE(followers.back()->wait_line("{\"child_pid\"", 10'000).empty());
    }
    const int service_code = svc->stop();
    int cut = 0;
    for (auto& f : followers) {
      REQUIRE(f->wait_exit() != -1);
      const auto lines = parsed(f->lines());
      if (lines.empty() || lines.back()["event"] != "finished") ++cut;
    }
    CHECK_MESSAGE(cut == 0, "X-SVC6: " << cut << " of 24 followers' streams were cut before their finished line");
    const sys::MonoNs stopped = sys::mono_now_ns();
    const int code = client.wait_exit();
    const auto client_ms = (sys::mono_now_ns() - stopped) / kNsPerMs;
    std::string out;
    std::string all;
    for (const auto& l : client.lines()) {
      all += l + "\n";
      if (l.rfind("{", 0) == 0) out = l;
    }
    INFO("client:\n" << all << "service:\n" << svc->log());
    CHECK(service_code == 0);
    const json o = json::parse(out, nullptr, false);
    REQUIRE(o.is_object());
    CHECK(o["outcome"] == "revoked");
    CHECK(o["revoke_cause"].is_string());
    CHECK(o["remote_effect"] == "possible");
    CHECK(code == exit_of(OutcomeKind::revoked));
    CHECK_MESSAGE(client_ms < 2'000, "the client went on waiting " << client_ms << " ms after the service stopped");
    CHECK(all.find("lost the service") == std::string::npos);
    CHECK(svc->log().find("streams_unfinished") == std::string::npos);
    s.fx.release();
  }

  TEST_CASE("X-SVC7: docs/service.md's table of states is the library's DeliveryState, in its order") {
    std::ifstream in(test::source_path("docs/service.md"));
    REQUIRE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    std::vector<std::string> documented;
    for (const auto& [word, meaning] : table_under(text.str(), "### States")) documented.push_back(word);
    std::vector<std::string> code;
    for (const auto& row : word_rows(DeliveryState{})) code.emplace_back(row.word);
    CHECK(documented == code);
  }

  TEST_CASE("X-SVC7: docs/service.md's table of events is the event table of src/report/event_json, with fields") {
    std::ifstream in(test::source_path("docs/service.md"));
    REQUIRE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    const auto rows = table_under(text.str(), "### Events");
    const auto code = report::event_table();
    REQUIRE(rows.size() == code.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      CAPTURE(rows[i].first);
      CHECK(rows[i].first == code[i].word);
      auto documented = names_in(rows[i].second);
      std::vector<std::string> fields(code[i].fields.begin(), code[i].fields.end());
      // The documented names are the fields, then the values some take.
      REQUIRE(documented.size() >= fields.size());
      documented.resize(fields.size());
      CHECK(documented == fields);
    }
  }
}

}  // namespace integration_service_events
