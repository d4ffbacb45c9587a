// service-crash.cpp — `git-courier serve` killed with SIGKILL and
// started again on the same journal: recovery finishes what was live, the
// queued deliveries are resumed under their ids with their first deadlines,
// and nothing is pushed twice (the fixture server's request log). The real
// binary, curl over its Unix socket, the TLS fixture server in front of git
// http-backend; every wait is on a fact (a held request announced, a log
// line, a journal entry, an event stream's end, a process's exit).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "fixture_server.hpp"
#include "journal/journal.hpp"
#include "service_support.hpp"
#include "support.hpp"
#include "sys/clock.hpp"
#include "sys/events.hpp"
#include "sys/spawn.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_service_crash {

using namespace courier;
using nlohmann::json;
using sys::kNsPerMs;

namespace {

// Waits (bounded) for a fact that announces nothing (a journal entry, a
// ref the server updates, the wall clock past an instant). The pause only
// paces the polling.
using test::gone_within;
using test::wait_for_fact;

struct Scene : test::ServiceScene {
  json body(const std::string& id, const std::string& ref, json more = json::object()) const {
    json b = {{"id", id}, {"repo", source}, {"remote", fx.url("r")}, {"ref", ref}, {"oid", tip}};
    for (auto& [k, v] : more.items()) b[k] = v;
    return b;
  }
  std::string remote_ref(const std::string& ref) const {
    auto r = test::git({"--git-dir", fx.repo_path("r"), "rev-parse", "--verify", "-q", ref});
    return r.ok() ? r.out.substr(0, 40) : std::string();
  }
  long posts() { return fx.count().count("POST /r.git/git-receive-pack"); }
};

}  // namespace

TEST_SUITE("service-crash") {
  TEST_CASE(
      "J3 J4 D1: a service SIGKILLed with one delivery held at its POST and four queued on its lane, started "
      "again on its journal: the held one ends interrupted, possible, read back; three queued are delivered; "
      "one whose deadline passed meanwhile ends deadline_killed, none; nothing is pushed twice") {
    Scene s;
    const std::vector<std::string> queued = {"q-1", "q-2", "q-3"};
    {
      auto svc = s.start();
      s.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
      test::Http p = svc->post(s.body("held", "refs/heads/main"));
      REQUIRE_MESSAGE(p.status == 202, std::string(p.raw + svc->log()));
      REQUIRE_MESSAGE(s.fx.wait_for_held(30'000).has_value(), svc->log());
      // The lane is held by "held" (its POST at the server): these wait.
      for (const auto& id : queued) {
        test::Http q = svc->post(s.body(id, "refs/heads/" + id));
        REQUIRE_MESSAGE(q.status == 202, q.raw);
      }
      // The last one's deadline passes while the service is down.
      test::Http late = svc->post(s.body("q-late", "refs/heads/q-late", {{"deadline", "3s"}}));
      REQUIRE_MESSAGE(late.status == 202, late.raw);
      for (const auto& id : {"q-1", "q-2", "q-3", "q-late"}) {
        test::Http g = svc->get(std::string("/v1/deliveries/") + id);
        CHECK_MESSAGE((g.body["state"] == "queued" || g.body["state"] == "pending"), g.raw);
      }
      const auto held = test::journalled(svc->journal(), "held");
      REQUIRE(held.has_value());
      REQUIRE(held->last(journal::Step::post_started).has_value());
      const std::int64_t child = test::dispatched_child_pid(*held);
      REQUIRE(child > 0);
      svc->crash();
      // PDEATHSIG ends the child with the service: wait for that fact.
      REQUIRE(gone_within(child, 5'000));
    }
    CHECK(s.fx.count().held.size() == 1);
    // The server goes on with the POST it had read: the pack is applied.
    s.fx.release();
    REQUIRE(wait_for_fact([&] { return s.remote_ref("refs/heads/main") == s.tip; }, 10'000));
    const auto late_rec = test::journalled(s.state + "/journal/journal.sqlite", "q-late");
    REQUIRE(late_rec.has_value());
    CHECK_FALSE(late_rec->finished);
    const std::int64_t late_deadline = late_rec->submission.deadline_unix_ms;
    REQUIRE(wait_for_fact([&] { return sys::wall_now_ms() > late_deadline; }, 10'000));
    const long posts_before = s.posts();
    CHECK(posts_before == 1);

    auto svc = s.start();
    // The held one: finished by recovery, interrupted, possible, read back.
    test::Http g = svc->get("/v1/deliveries/held");
    REQUIRE_MESSAGE(g.status == 200, g.raw);
    INFO("restart log:\n" << svc->log());
    CHECK(g.body["state"] == "finished");
    CHECK_MESSAGE(g.body["attempt"] == 1, "the held delivery, claimed and dispatched, was submitted again: " << g.raw);
    CHECK(g.body["outcome"]["outcome"] == "interrupted");
    CHECK(g.body["outcome"]["remote_effect"] == "possible");
    REQUIRE_MESSAGE(g.body["outcome"]["observed_after"].is_object(), g.raw);
    CHECK(g.body["outcome"]["observed_after"]["oid"] == s.tip);
    CHECK(g.body["outcome"]["observed_after"]["matches_this_delivery"] == true);
    // The queued ones: resumed as attempt 2, delivered once each.
    for (const auto& id : queued) {
      CAPTURE(id);
      auto events = svc->events(id);
      REQUIRE_MESSAGE(!events.empty(), svc->log());
      const json& last = events.back();
      CHECK(last["event"] == "finished");
      CHECK_MESSAGE(last["outcome"]["outcome"] == "delivered", last.dump());
      CHECK(last["outcome"]["attempt"] == 2);
      CHECK(s.remote_ref("refs/heads/" + id) == s.tip);
    }
    // The late one: its first deadline kept, passed while the service was down.
    auto late_events = svc->events("q-late");
    REQUIRE_FALSE(late_events.empty());
    const json late_outcome = late_events.back()["outcome"];
    CHECK_MESSAGE(late_outcome["outcome"] == "deadline_killed", late_outcome.dump());
    CHECK(late_outcome["remote_effect"] == "none");
    CHECK_MESSAGE(
        late_outcome["reason"].get<std::string>().find("passed while nothing ran this delivery") != std::string::npos,
        late_outcome.dump());
    CHECK(s.remote_ref("refs/heads/q-late").empty());
    const auto late_after = test::journalled(svc->journal(), "q-late");
    CHECK(late_after->submission.deadline_unix_ms == late_deadline);
    CHECK_FALSE(late_after->last(journal::Step::claimed).has_value());
    // The server's log: one POST per delivery that sent one (held + three).
    CHECK_MESSAGE(s.posts() == 4, "POSTs at the server: " << s.posts() << " (held once, and one per queued delivery)");
    CHECK(s.fx.count().peak_receive_pack == 1);
    CHECK(svc->stop() == 0);
  }
}

}  // namespace integration_service_crash
