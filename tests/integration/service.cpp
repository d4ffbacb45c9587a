// service.cpp — `git-courier serve`, the shipped binary, driven as its
// callers drive it: curl over the Unix socket, against the fixture server
// (real TLS, real git http-backend), the remote's refs read back with git
// and the journal read back after. Every wait is on a fact: the service's
// "listening" log line, the server's announcement of a held POST, the end
// of an event stream, the service's exit.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixture_server.hpp"
#include "journal/journal.hpp"
#include "service_support.hpp"
#include "sys/fd.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_service {

using namespace courier;
using nlohmann::json;

namespace {

using test::curl;
using test::Http;
using test::lines_of;

// A running `git-courier serve` on a socket in a temporary directory, its
// log (stderr) read line by line.
struct Service {
  test::TempDir dir;
  std::string root;
  std::string socket;
  std::string journal;
  std::unique_ptr<test::LineProcess> proc;
  bool exited = false;

  // `path` is the service's PATH (where it finds git).
  explicit Service(const std::vector<std::string>& extra, const std::string& socket_dir = {},
                   const std::string& path = "/usr/bin:/bin") {
    root = dir.path() + "/repos";
    std::filesystem::create_directories(root);
    socket = (socket_dir.empty() ? dir.path() + "/run" : socket_dir) + "/serve.sock";
    journal = dir.path() + "/state/journal.sqlite";
    // sh -c: $0 is the binary, "$@" its arguments; the log (stderr) is read
    // as lines.
    const std::string cmd = "exec /usr/bin/env -i PATH=" + path + " LANG=C HOME=" + dir.path() + " '" +
                            test::test_root_env() + "' \"$0\" serve \"$@\" 2>&1";
    std::vector<std::string> argv = {"/bin/sh", "-c",       cmd,    COURIER_BINARY, "--repo-root",
                                     root,      "--socket", socket, "--journal",    journal};
    argv.insert(argv.end(), extra.begin(), extra.end());
    proc = std::make_unique<test::LineProcess>(argv);
    const std::string up = proc->wait_line("{\"event\":\"listening\"", 30'000);
    if (up.empty()) {
      std::string log;
      for (const auto& l : proc->lines()) log += l + "\n";
      FAIL("the service did not start listening:\n" << log);
    }
  }
  ~Service() {
    if (!exited) {
      ::kill(proc->pid(), SIGTERM);
      proc->wait_exit();
    }
  }
  // SIGTERM, then the exit code.
  int stop() {
    ::kill(proc->pid(), SIGTERM);
    exited = true;
    return proc->wait_exit();
  }
  std::string log() const {
    std::string out;
    for (const auto& l : proc->lines()) out += l + "\n";
    return out;
  }
  // The TCP listener's port (with --listen 127.0.0.1:0, the kernel's
  // choice), as the log said before "listening"; 0 when none.
  std::int64_t tcp_port() const {
    std::int64_t port = 0;
    for (const auto& line : proc->lines()) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.value("event", "") == "tcp_listening") port = j.value("port", 0);
    }
    return port;
  }
  Http post(const json& body) const { return curl(socket, "POST", "/v1/deliveries", body.dump()); }
  Http get(const std::string& path) const { return curl(socket, "GET", path); }
  // The whole event stream (it ends after `finished`).
  std::vector<json> events(const std::string& id) const {
    return lines_of(curl(socket, "GET", "/v1/deliveries/" + id + "/events").raw);
  }
  std::vector<journal::Record> journalled() const {
    if (!std::filesystem::exists(journal)) return {};
    auto j = journal::open_sqlite(journal);
    REQUIRE(j.has_value());
    auto r = (*j)->recent(1000);
    REQUIRE(r.has_value());
    return *r;
  }
};

// A source repository under the service's root, and a bare remote.
struct Scene {
  test::FixtureServer fx;
  std::unique_ptr<Service> svc;
  std::string source;
  std::string tip;
  std::string remote;

  explicit Scene(std::vector<std::string> extra = {}, int commits = 3, const std::string& path = "/usr/bin:/bin") {
    extra.insert(extra.end(), {"--ca-file", fx.ca_file()});
    svc = std::make_unique<Service>(extra, std::string(), path);
    source = svc->root + "/source";
    tip = test::make_source_repo(source, commits);
    fx.create_bare_repo("r");
    remote = fx.url("r");
  }
  json body(const std::string& rev = "HEAD", json more = json::object()) const {
    json b = {{"repo", source}, {"remote", remote}, {"ref", "refs/heads/main"}, {"rev", rev}};
    for (auto& [k, v] : more.items()) b[k] = v;
    return b;
  }
  std::string ref() const {
    auto r = test::git({"--git-dir", fx.repo_path("r"), "rev-parse", "--verify", "-q", "refs/heads/main"});
    return r.ok() ? r.out.substr(0, 40) : std::string();
  }
  std::string rev(const std::string& spec) const { return test::git_ok({"rev-parse", spec}, source); }
};

json outcome_of(const std::vector<json>& events) {
  REQUIRE_FALSE(events.empty());
  return events.back()["outcome"];
}

// What a writer of the journal's database can put in a row: a value nested
// `depth` arrays deep, as the whole detail of every entry of `id` but its
// submission and its outcome, and as an extra field of its outcome.
void nest_details(const std::string& journal_path, const std::string& id, std::size_t depth) {
  const std::string deep = std::string(depth, '[') + std::string(depth, ']');
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(journal_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db,
                             "UPDATE entries SET detail = CASE step WHEN 'finished' THEN "
                             "'{\"deep\":' || ?1 || ',' || substr(detail, 2) ELSE '{\"deep\":' || ?1 || '}' END "
                             "WHERE id = ?2 AND step <> 'submitted'",
                             -1, &st, nullptr) == SQLITE_OK);
  sqlite3_bind_text(st, 1, deep.c_str(), static_cast<int>(deep.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, id.c_str(), static_cast<int>(id.size()), SQLITE_TRANSIENT);
  CHECK(sqlite3_step(st) == SQLITE_DONE);
  CHECK(sqlite3_changes(db) > 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// A git whose pack-objects first says its parent's pid (the delivery
// child's) in <dir>/child.pid, then waits (bounded) until <dir>/held exists:
// the time a process outside the delivery's kill domain takes to open that
// child's stderr pipe for itself. Every other git command is git's own.
void write_pausing_git(const std::string& dir) {
  const std::string script =
      "#!/bin/sh\n"
      "case \" $* \" in *\" pack-objects \"*) ;; *) exec /usr/bin/git \"$@\" ;; esac\n"
      "echo $PPID > \"" +
      dir + "/child.pid.tmp\" && mv \"" + dir + "/child.pid.tmp\" \"" + dir +
      "/child.pid\"\n"
      "i=0; while [ ! -e \"" +
      dir +
      "/held\" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done\n"
      "exec /usr/bin/git \"$@\"\n";
  test::write_file(dir + "/git", script);
  REQUIRE(::chmod((dir + "/git").c_str(), 0755) == 0);
}

}  // namespace

TEST_SUITE("service") {
  TEST_CASE(
      "service: serve delivers over its Unix socket: POST, GET, the events stream complete and ordered, then "
      "up_to_date and a rejected non-fast-forward") {
    Scene s;
    Http p = s.svc->post(s.body("HEAD~1"));
    REQUIRE_MESSAGE(p.status == 202, std::string(p.raw + s.svc->log()));
    const std::string id = p.body["id"];
    CHECK(p.body["attempt"] == 1);
    auto events = s.svc->events(id);
    REQUIRE(events.size() >= 4);
    std::int64_t last = 0;
    for (const auto& e : events) {
      CHECK_MESSAGE(e["seq"].get<std::int64_t>() > last, std::string("events out of order: " + e.dump()));
      last = e["seq"];
    }
    CHECK(events.front()["event"] == "queued");
    CHECK(events.back()["event"] == "finished");
    bool dispatched = false;
    for (const auto& e : events) dispatched = dispatched || e["event"] == "dispatched";
    CHECK(dispatched);
    CHECK(outcome_of(events)["outcome"] == "delivered");
    CHECK(s.ref() == s.rev("HEAD~1"));
    Http g = s.svc->get("/v1/deliveries/" + id);
    CHECK(g.status == 200);
    CHECK(g.body["state"] == "finished");
    CHECK(g.body["outcome"]["outcome"] == "delivered");
    CHECK(g.body["outcome"]["remote_effect"] == "applied");
    CHECK(g.body["transitions"].size() >= 5);
    CHECK(g.body["oid"] == s.rev("HEAD~1"));
    // A replay of the whole stream after it ended, and from a given seq.
    CHECK(s.svc->events(id).size() == events.size());
    const std::string second = events[1]["seq"].dump();
    CHECK(lines_of(s.svc->get("/v1/deliveries/" + id + "/events?after=" + second).raw).size() == events.size() - 2);

    Http again = s.svc->post(s.body("HEAD~1"));
    REQUIRE(again.status == 202);
    CHECK(outcome_of(s.svc->events(again.body["id"]))["outcome"] == "up_to_date");
    Http ahead = s.svc->post(s.body("HEAD"));
    REQUIRE(ahead.status == 202);
    CHECK(outcome_of(s.svc->events(ahead.body["id"]))["outcome"] == "delivered");
    Http back = s.svc->post(s.body("HEAD~2"));
    REQUIRE(back.status == 202);
    json rejected = outcome_of(s.svc->events(back.body["id"]));
    CHECK(rejected["outcome"] == "rejected");
    CHECK(rejected["reason"].get<std::string>().find("non-fast-forward") != std::string::npos);
    CHECK(s.ref() == s.tip);
    Http listed = s.svc->get("/v1/deliveries?state=finished&limit=10");
    CHECK(listed.body["deliveries"].size() == 4);
    CHECK(s.svc->get("/healthz").body["status"] == "ok");
    CHECK(s.svc->get("/metrics")
              .raw.find("git_courier_deliveries_total{outcome=\"delivered\",remote_effect=\"applied\"} 2") !=
          std::string::npos);
    CHECK(s.svc->stop() == 0);
  }

  TEST_CASE(
      "S4 service: a delivery held at its POST is revoked through DELETE and confirmed; one past its deadline ends "
      "deadline_killed") {
    Scene s;
    s.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    Http p = s.svc->post(s.body("HEAD~1"));
    REQUIRE(p.status == 202);
    const std::string id = p.body["id"];
    REQUIRE(s.fx.wait_for_held(30'000).has_value());
    Http d = curl(s.svc->socket, "DELETE", "/v1/deliveries/" + id);
    CHECK(d.status == 200);
    CHECK(d.body["result"] == "stopping");
    json o = outcome_of(s.svc->events(id));
    CHECK(o["outcome"] == "revoked");
    CHECK(o["remote_effect"] == "possible");
    CHECK(o["child"]["reaped"] == true);
    Http twice = curl(s.svc->socket, "DELETE", "/v1/deliveries/" + id);
    CHECK(twice.body["result"] == "already_finished");
    s.fx.release();  // the server then applies the body it held: HEAD~1

    s.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    Http late = s.svc->post(s.body("HEAD", {{"deadline", "3s"}}));
    REQUIRE(late.status == 202);
    REQUIRE_MESSAGE(s.fx.wait_for_held(30'000).has_value(),
                    s.svc->get("/v1/deliveries/" + late.body["id"].get<std::string>()).raw);
    json k = outcome_of(s.svc->events(late.body["id"]));
    CHECK(k["outcome"] == "deadline_killed");
    s.fx.release();
    CHECK(s.svc->stop() == 0);
  }

  TEST_CASE(
      "J4 service: the same id submitted twice while in flight is one delivery and one POST at the server; another "
      "body under that id is 409 and journals nothing") {
    Scene s;
    s.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    Http first = s.svc->post(s.body("HEAD", {{"id", "order-17"}}));
    REQUIRE(first.status == 202);
    REQUIRE(s.fx.wait_for_held(30'000).has_value());
    Http second = s.svc->post(s.body("HEAD", {{"id", "order-17"}}));
    CHECK(second.status == 202);
    CHECK(second.body["id"] == "order-17");
    CHECK(second.body["state"] == "running");
    Http other = s.svc->post(s.body("HEAD~1", {{"id", "order-17"}}));
    CHECK(other.status == 409);
    CHECK(other.body["error"]["code"] == "id_conflict");
    s.fx.release();
    json o = outcome_of(s.svc->events("order-17"));
    CHECK_MESSAGE(o["outcome"] == "delivered", std::string("the id in flight was submitted again: " + o.dump()));
    CHECK(s.fx.count().count("POST /r.git/git-receive-pack") == 1);
    auto records = s.svc->journalled();
    REQUIRE(records.size() == 1);
    CHECK(records[0].submission.attempt == 1);
    // Once finished, the same id is answered from the journal: nothing sent.
    Http replay = s.svc->post(s.body("HEAD", {{"id", "order-17"}}));
    CHECK(replay.status == 200);
    CHECK(replay.body["replayed"] == true);
    CHECK(replay.body["outcome"]["outcome"] == "delivered");
    CHECK(s.fx.count().count("POST /r.git/git-receive-pack") == 1);
    CHECK(s.svc->stop() == 0);
  }

  TEST_CASE("X-SVC4: 429 queue_full with Retry-After once --max-queued deliveries wait; nothing journalled for it") {
    Scene s({"--workers", "1", "--max-queued", "1"});
    s.fx.create_bare_repo("q");
    s.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    Http running = s.svc->post(s.body());
    REQUIRE(running.status == 202);
    REQUIRE(s.fx.wait_for_held(30'000).has_value());
    json b = s.body();
    b["remote"] = s.fx.url("q");
    Http waiting = s.svc->post(b);
    CHECK(waiting.status == 202);
    b["ref"] = "refs/heads/other";
    Http refused = s.svc->post(b);
    CHECK(refused.status == 429);
    CHECK(refused.body["error"]["code"] == "queue_full");
    CHECK(refused.headers.find("Retry-After: ") != std::string::npos);
    CHECK(s.svc->journalled().size() == 2);
    s.fx.release();
    CHECK(outcome_of(s.svc->events(waiting.body["id"]))["outcome"] == "delivered");
    CHECK(s.svc->stop() == 0);
  }

  TEST_CASE("X-SVC4: every bad input gets its 4xx naming the field, and nothing is journalled") {
    Scene s({"--credential", "deploy=credential", "--credential-scope", "deploy=https://git.example/"}, 2);
    test::TempDir outside;
    test::make_source_repo(outside.path() + "/elsewhere", 1);
    std::filesystem::create_symlink(outside.path() + "/elsewhere", s.svc->root + "/link");
    struct Bad {
      json body;
      int status;
      std::string code;
      std::string field;
    };
    json with_oid = s.body();
    with_oid.erase("rev");
    with_oid["oid"] = s.tip;
    const std::vector<Bad> cases = {
        {s.body("HEAD", {{"colour", "blue"}}), 400, "unknown_field", "colour"},
        {s.body("HEAD", {{"repo", "/etc"}}), 403, "repo_outside_root", "repo"},
        {s.body("HEAD", {{"repo", s.svc->root + "/link"}}), 403, "repo_outside_root", "repo"},
        {s.body("HEAD", {{"repo", "relative/path"}}), 400, "bad_field", "repo"},
        {s.body("HEAD", {{"credential", "nobody"}}), 400, "unknown_credential", "credential"},
        {s.body("HEAD", {{"credential", "deploy"}}), 403, "credential_out_of_scope", "credential"},
        {s.body("HEAD", {{"remote", "http://example.com/r.git"}}), 400, "bad_remote", "remote"},
        {s.body("HEAD", {{"remote", "https://user:pw@example.com/r.git"}}), 400, "bad_remote", "remote"},
        {s.body("HEAD", {{"remote", "https://example.com/a/../r.git"}}), 400, "bad_remote", "remote"},
        {s.body("HEAD", {{"ref", "main"}}), 400, "bad_field", "ref"},
        {s.body("HEAD", {{"deadline", "25h"}}), 400, "bad_field", "deadline"},
        {s.body("HEAD", {{"deadline", "soon"}}), 400, "bad_field", "deadline"},
        {s.body("HEAD", {{"update", "sideways"}}), 400, "bad_field", "update"},
        {s.body("HEAD", {{"id", "no spaces"}}), 400, "bad_field", "id"},
        {s.body(":/message"), 400, "bad_field", "rev"},
        {s.body("no-such-branch"), 400, "bad_field", "rev"},
        {s.body("HEAD", {{"oid", s.tip}}), 400, "bad_field", "oid"},
        {json{{"repo", s.source}, {"remote", s.remote}, {"rev", "HEAD"}}, 400, "missing_field", "ref"},
        {[&] {
           json j = with_oid;
           j["oid"] = std::string(40, 'f');
           return j;
         }(),
         400, "bad_field", "oid"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.body.dump());
      Http h = s.svc->post(c.body);
      CHECK(h.status == c.status);
      CHECK(h.body["error"]["code"] == c.code);
      CHECK(h.body["error"]["field"] == c.field);
    }
    Http not_json = curl(s.svc->socket, "POST", "/v1/deliveries", "{\"repo\": ");
    CHECK(not_json.status == 400);
    CHECK(not_json.body["error"]["code"] == "bad_json");
    Http big = curl(s.svc->socket, "POST", "/v1/deliveries", "{\"x\": \"" + std::string(70 * 1024, 'a') + "\"}");
    CHECK(big.status == 413);
    CHECK(big.body["error"]["code"] == "body_too_large");
    CHECK(s.svc->get("/v1/deliveries/nothing-here").status == 404);
    CHECK(s.svc->journalled().empty());
    CHECK(s.svc->stop() == 0);
  }

  TEST_CASE("H2: a remote's password holding '/', '?', '#' or '@' is in neither the service's 400 answer nor its log") {
    Scene s;
    for (const std::string mid : {"/", "?", "#", "@", "/a?b#"}) {
      const std::string pw = "Zq9" + mid + "Xw7";
      CAPTURE(pw);
      Http h = s.svc->post(s.body("HEAD", {{"remote", "https://alice:" + pw + "@example.com/r.git"}}));
      CHECK(h.status == 400);
      CHECK(h.body["error"]["field"] == "remote");
      CHECK_MESSAGE(h.raw.find("Zq9") == std::string::npos, h.raw);
      CHECK_MESSAGE(h.raw.find("Xw7") == std::string::npos, h.raw);
    }
    CHECK(s.svc->stop() == 0);
    CHECK(s.svc->log().find("Zq9") == std::string::npos);
    CHECK(s.svc->log().find("Xw7") == std::string::npos);
    CHECK(s.svc->journalled().empty());
  }

  TEST_CASE(
      "X-SVC2: on loopback TCP only a caller with the bearer token is served: none or a wrong one gets 401 and is "
      "logged, the right one submits a delivery") {
    test::TempDir secrets;
    const std::string token = "tcp-token-0123456789abcdef";
    const std::string token_file = secrets.path() + "/api-token";
    test::write_file(token_file, token + "\n");
    REQUIRE(::chmod(token_file.c_str(), 0600) == 0);
    Scene s({"--listen", "127.0.0.1:0", "--api-token-file", token_file});
    // Port 0: the kernel's choice, said in the log before "listening".
    const std::int64_t port = s.svc->tcp_port();
    REQUIRE_MESSAGE(port > 0, s.svc->log());
    auto tcp = [&](const std::string& method, const std::string& path, const std::string& bearer,
                   const std::string& body = {}) { return test::curl_tcp(port, method, path, bearer, body); };
    Http none = tcp("GET", "/healthz", "");
    CHECK_MESSAGE(none.status == 401, std::string("a caller without the token was served: " + none.raw));
    CHECK(none.headers.find("WWW-Authenticate: Bearer") != std::string::npos);
    Http wrong = tcp("GET", "/healthz", "tcp-token-0123456789abcdeX");
    CHECK_MESSAGE(wrong.status == 401, std::string("a caller with a wrong token was served: " + wrong.raw));
    Http refused_post = tcp("POST", "/v1/deliveries", "", s.body().dump());
    CHECK(refused_post.status == 401);
    CHECK(s.svc->journalled().empty());
    CHECK(s.svc->log().find("\"event\":\"caller_refused\"") != std::string::npos);
    CHECK(s.svc->log().find(token) == std::string::npos);  // the token itself is never logged
    Http ok = tcp("GET", "/healthz", token);
    CHECK(ok.status == 200);
    CHECK(ok.body["status"] == "ok");
    Http p = tcp("POST", "/v1/deliveries", token, s.body().dump());
    REQUIRE_MESSAGE(p.status == 202, std::string(p.raw + s.svc->log()));
    auto events = s.svc->events(p.body["id"]);
    CHECK(outcome_of(events)["outcome"] == "delivered");
    CHECK(s.ref() == s.tip);
    CHECK(s.svc->stop() == 0);
  }

  TEST_CASE("X-SVC1: a caller with another uid is refused 403 peer_refused and logged; --allow-gid lets its group in") {
    // A directory others may traverse, so that another user can reach the
    // socket at all: the peer check is what must refuse it.
    char tmpl[] = "/tmp/courier-svc-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const std::string shared = tmpl;
    REQUIRE(::chmod(shared.c_str(), 0711) == 0);
    {
      Service svc({"--allow-gid", "4242"}, shared + "/run");
      REQUIRE(::chmod((shared + "/run").c_str(), 0751) == 0);
      REQUIRE(::chmod(svc.socket.c_str(), 0666) == 0);
      const std::vector<std::string> nobody = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
      Http refused = curl(svc.socket, "GET", "/healthz", {}, nobody);
      CHECK_MESSAGE(refused.status == 403, std::string("another uid was let in: " + refused.raw));
      CHECK(refused.body["error"]["code"] == "peer_refused");
      // The log line is written by the service's thread and read through a
      // pipe: wait for it (bounded), never assume it came with the answer.
      const std::string logged = svc.proc->wait_line("{\"event\":\"peer_refused\"", 10'000);
      CHECK_MESSAGE(!logged.empty(), std::string("the refusal was not logged:\n" + svc.log()));
      CHECK(logged.find("\"uid\":65534") != std::string::npos);
      const std::vector<std::string> member = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--groups=4242"};
      CHECK(curl(svc.socket, "GET", "/healthz", {}, member).status == 200);
      CHECK(curl(svc.socket, "GET", "/healthz").status == 200);  // the service's own uid
      CHECK(svc.stop() == 0);
    }
    std::filesystem::remove_all(shared);
  }

  TEST_CASE(
      "S2 service: SIGTERM drains: new submissions get 503, a delivery held past --drain-timeout is revoked and its "
      "stop confirmed, exit 0, every delivery finished in the journal, no child or lane lock left") {
    Scene s({"--drain-timeout", "1s"});
    s.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    Http p = s.svc->post(s.body());
    REQUIRE(p.status == 202);
    const std::string id = p.body["id"];
    REQUIRE(s.fx.wait_for_held(30'000).has_value());
    ::kill(s.svc->proc->pid(), SIGTERM);
    REQUIRE_FALSE(s.svc->proc->wait_line("{\"drain_timeout_ms\"", 10'000).empty());
    Http refused = s.svc->post(s.body("HEAD~1"));
    CHECK(refused.status == 503);
    CHECK(refused.body["error"]["code"] == "draining");
    s.svc->exited = true;
    CHECK(s.svc->proc->wait_exit() == 0);
    s.fx.release();
    auto records = s.svc->journalled();
    REQUIRE(records.size() == 1);
    CHECK_MESSAGE(records[0].finished, std::string("the service exited before the revoked delivery's stop was "
                                                   "confirmed and journalled"));
    auto last = records[0].last(journal::Step::finished);
    REQUIRE(last.has_value());
    CHECK(journal::detail_text(last->detail, "kind") == "revoked");
    // No lane lock held: every lock file in the lane directory can be taken.
    // The service's lane directory, as it said when it started listening.
    const json listening = json::parse(s.svc->proc->wait_line("{\"event\":\"listening\"", 0), nullptr, false);
    REQUIRE(listening.is_object());
    const std::string lanes = listening.value("lane_dir", "");
    REQUIRE_FALSE(lanes.empty());
    for (const auto& f : std::filesystem::directory_iterator(lanes)) {
      const int fd = ::open(f.path().c_str(), O_RDONLY | O_CLOEXEC);
      REQUIRE(fd >= 0);
      CHECK_MESSAGE(::flock(fd, LOCK_EX | LOCK_NB) == 0,
                    std::string("a lane lock is still held: " + f.path().string()));
      ::close(fd);
    }
    CHECK(s.svc->log().find("\"event\":\"stopped\"") != std::string::npos);
  }

  TEST_CASE(
      "S5 service: a delivery waiting for its lane when SIGTERM arrives is withdrawn: it ends cancelled_no_dispatch "
      "and sends nothing, while the live one it waited behind finishes delivered") {
    Scene s({"--drain-timeout", "60s"});
    s.fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    Http first = s.svc->post(s.body("HEAD~1"));
    REQUIRE(first.status == 202);
    REQUIRE(s.fx.wait_for_held(30'000).has_value());
    Http second = s.svc->post(s.body("HEAD"));
    REQUIRE(second.status == 202);
    const std::string queued_id = second.body["id"];
    // The second waits behind the held POST on the same lane: the service
    // says so (pending) before the signal is sent.
    std::string state;
    const bool pending = test::wait_for_fact(
        [&] {
          state = s.svc->get("/v1/deliveries/" + queued_id).body.value("state", "");
          return state == "pending";
        },
        30'000, 10'000);
    REQUIRE_MESSAGE(pending, std::string("the second delivery never waited for its lane: " + state));
    ::kill(s.svc->proc->pid(), SIGTERM);
    const std::string withdrawn = s.svc->proc->wait_line("{\"event\":\"withdrawn\"", 10'000);
    REQUIRE_MESSAGE(!withdrawn.empty(), std::string("no withdrawal logged:\n" + s.svc->log()));
    CHECK(withdrawn.find("\"queued\":1") != std::string::npos);
    // Only now may the lane free up: a seat freed during the drain must not
    // start the withdrawn delivery.
    s.fx.release();
    s.svc->exited = true;
    CHECK(s.svc->proc->wait_exit() == 0);
    CHECK(s.fx.count().count("POST /r.git/git-receive-pack") == 1);
    const std::string first_id = first.body["id"];
    std::map<std::string, std::string> kinds;
    for (const auto& r : s.svc->journalled()) {
      CHECK_MESSAGE(r.finished, std::string("unfinished in the journal: " + r.submission.id));
      if (auto f = r.last(journal::Step::finished)) kinds[r.submission.id] = journal::detail_text(f->detail, "kind");
    }
    CHECK(kinds[first_id] == "delivered");
    CHECK_MESSAGE(kinds[queued_id] == "cancelled_no_dispatch",
                  std::string("the queued delivery was dispatched during the drain: " + kinds[queued_id]));
    CHECK(s.ref() == s.rev("HEAD~1"));
  }

  TEST_CASE("X-START1: serve --help loads none of the libraries, libmicrohttpd included") {
    std::vector<std::string> env = test::cli_env();
    env.emplace_back("LD_DEBUG=files");
    auto r = test::run({COURIER_BINARY, "serve", "--help"}, {}, test::Stdin::bytes, env);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("--repo-root") != std::string::npos);
    REQUIRE(r.err.find("libc.so") != std::string::npos);
    for (const char* lib : {"libmicrohttpd.so", "libcurl.so", "libgit2.so", "libsqlite3.so", "libcrypto.so"}) {
      CHECK_MESSAGE(r.err.find(std::string("file=") + lib) == std::string::npos,
                    std::string(std::string(lib) + " was loaded"));
    }
  }

  TEST_CASE(
      "S5 S3 service: a DELETE right after each delivery is accepted, with warm children, twelve times in a row, "
      "never leaves an unconfirmed stop; the lane still delivers") {
    // The report this guards against: a DELETE right after the job went to
    // a warm child read "Connection reset by peer" on its socket, ended
    // cancel_uncertain and poisoned the lane (1 in 12 sequential tries).
    // Each try revokes as soon as the service accepted the delivery, so the
    // revocation lands anywhere from before the claim to the middle of the
    // push; whichever it is, the stop is confirmed. This checks the symptom
    // end to end and does not force the window (a curl started after the
    // answer comes too late for it: with the reset handling reverted, 36
    // tries here all ended revoked and confirmed). The window itself is
    // forced by the seams suite: the reset at the sys level, and revocations
    // at the claim and at the hand-over (ExecutorOptions::at_point_for_tests).
    Scene s({"--warm", "2", "--workers", "2"});
    std::map<std::string, int> seen;
    for (int i = 0; i < 12; ++i) {
      Http p = s.svc->post(s.body("HEAD", {{"ref", "refs/heads/t" + std::to_string(i)}}));
      REQUIRE_MESSAGE(p.status == 202, std::string(p.raw + s.svc->log()));
      const std::string id = p.body["id"];
      Http d = curl(s.svc->socket, "DELETE", "/v1/deliveries/" + id);
      CHECK(d.status / 100 == 2);
      const json o = outcome_of(s.svc->events(id));
      const std::string kind = o["outcome"];
      ++seen[kind];
      INFO("try ", i, ": ", o.dump());
      const auto parsed = outcome_from_name(kind);
      REQUIRE(parsed.has_value());
      CHECK_MESSAGE(!is_unconfirmed(*parsed), "a revoked warm child's stop was not confirmed");
    }
    std::string counts;
    for (const auto& [kind, n] : seen) counts += kind + " " + std::to_string(n) + "; ";
    MESSAGE("outcomes of 12 tries: ", counts);
    test::report("service DELETE after accept", "unconfirmed stops", seen["cancel_uncertain"], "of 12");
    // The lane is not poisoned: the next delivery to the remote delivers.
    Http last = s.svc->post(s.body("HEAD", {{"ref", "refs/heads/after"}}));
    REQUIRE(last.status == 202);
    CHECK(outcome_of(s.svc->events(last.body["id"]))["outcome"] == "delivered");
    CHECK(s.svc->stop() == 0);
  }

  TEST_CASE(
      "P1 service: a journal row whose detail nests 100,000 deep: GET /v1/deliveries/ID answers, the service stays up, "
      "and log --json and show --json answer") {
    // P1's rule (a malformed or oversized message is refused, never acted
    // on) for JSON the service reads from its journal: a row of a shared
    // database is written by whoever can write that database.
    Scene s;
    Http p = s.svc->post(s.body());
    REQUIRE(p.status == 202);
    const std::string id = p.body["id"];
    CHECK(outcome_of(s.svc->events(id))["outcome"] == "delivered");
    nest_details(s.svc->journal, id, 100'000);
    Http got = s.svc->get("/v1/deliveries/" + id);
    CHECK_MESSAGE(got.status == 200,
                  "the service did not answer for a delivery whose journal row nests 100,000 "
                  "deep:\n"
                      << got.raw.substr(0, 200) << "\n"
                      << s.svc->log());
    if (got.status == 200) {
      CHECK(got.body["id"] == id);
      CHECK(got.body["outcome"]["outcome"] == "delivered");
      CHECK(got.body["transitions"].size() >= 3);
      for (const auto& t : got.body["transitions"]) {
        CHECK_MESSAGE(!t["detail"].contains("deep"), "a detail past the depth cap was answered: " << t["step"]);
      }
    }
    CHECK(s.svc->get("/healthz").status == 200);
    CHECK(s.svc->stop() == 0);  // SIGTERM answered, not a crash
    const auto env = test::cli_env();
    auto log = test::run({COURIER_BINARY, "log", "--json", "--journal", s.svc->journal}, {}, test::Stdin::bytes, env);
    CHECK_MESSAGE(log.exit_code == 0, log.err);
    CHECK(json::parse(log.out, nullptr, false).is_array());
    auto show =
        test::run({COURIER_BINARY, "show", id, "--json", "--journal", s.svc->journal}, {}, test::Stdin::bytes, env);
    CHECK_MESSAGE(show.exit_code == 0, show.err);
    const json shown = json::parse(show.out, nullptr, false);
    CHECK(shown.is_object());
    // The row is shown as the text it is, not as a value.
    CHECK(show.out.find("[[[[") != std::string::npos);
  }

  TEST_CASE("X-SVC2: on TCP the auth scheme's name is case-insensitive (RFC 9110): bearer and BEARER are served") {
    test::TempDir secrets;
    const std::string token = "tcp-token-0123456789abcdef";
    const std::string token_file = secrets.path() + "/api-token";
    test::write_file(token_file, token + "\n");
    REQUIRE(::chmod(token_file.c_str(), 0600) == 0);
    Scene s({"--listen", "127.0.0.1:0", "--api-token-file", token_file});
    const std::int64_t port = s.svc->tcp_port();
    REQUIRE_MESSAGE(port > 0, s.svc->log());
    auto with = [&](const std::string& authorization) {
      return test::parse_http(
          test::run({"/usr/bin/curl", "-sS", "-i", "--max-time", "60", "-H", "Authorization: " + authorization,
                     "http://127.0.0.1:" + std::to_string(port) + "/healthz"},
                    {}, test::Stdin::bytes, test::cli_env())
              .out);
    };
    CHECK(with("Bearer " + token).status == 200);
    CHECK_MESSAGE(with("bearer " + token).status == 200, "the scheme 'bearer' was refused");
    CHECK(with("BEARER " + token).status == 200);
    CHECK(with("bearer " + token + "X").status == 401);
    CHECK(with("Basic " + token).status == 401);
    CHECK(with("bearer").status == 401);
    CHECK(s.svc->stop() == 0);
  }

  TEST_CASE(
      "S3 service: a service one of whose deliveries ended with an unconfirmed stop exits 7 on SIGTERM and its last "
      "log line counts the unconfirmed stops") {
    // A process outside the kill domain (here, this test) holds the write end
    // of the delivery child's stderr pipe: nothing the service can kill ends
    // it, so no end-of-file comes and the stop cannot be confirmed.
    test::TempDir bin;
    write_pausing_git(bin.path());
    Scene s({"--stop-bound", "300ms"}, 3, bin.path() + ":/usr/bin:/bin");
    Http p = s.svc->post(s.body());
    REQUIRE_MESSAGE(p.status == 202, std::string(p.raw + s.svc->log()));
    REQUIRE_MESSAGE(test::wait_for_fact([&] { return std::filesystem::exists(bin.path() + "/child.pid"); }, 30'000),
                    "git pack-objects never ran\n"
                        << s.svc->log());
    const std::string child = test::read_file(bin.path() + "/child.pid");
    const std::string pipe = "/proc/" + child.substr(0, child.find('\n')) + "/fd/2";
    sys::ScopedFd holder(::open(pipe.c_str(), O_WRONLY | O_CLOEXEC));
    REQUIRE_MESSAGE(holder.get() >= 0, "cannot open " << pipe);
    test::write_file(bin.path() + "/held", "");
    const json o = outcome_of(s.svc->events(p.body["id"]));
    const auto kind = outcome_from_name(o.value("outcome", ""));
    REQUIRE_MESSAGE((kind && is_unconfirmed(*kind)), "the held pipe's delivery ended confirmed: " << o.dump());
    // The work that may still run kept its scratch directory; this test knows
    // it does not, and removes it.
    if (o["scratch_kept"].is_string()) std::filesystem::remove_all(o["scratch_kept"].get<std::string>());
    // What the operator's alerts read (GitCourierUnconfirmedStop,
    // GitCourierLanePoisoned): one unconfirmed child, one poisoned lane.
    const std::string metrics = s.svc->get("/metrics").raw;
    CHECK_MESSAGE(metrics.find("\ngit_courier_unconfirmed_children 1\n") != std::string::npos, metrics);
    CHECK_MESSAGE(metrics.find("\ngit_courier_poisoned_lanes 1\n") != std::string::npos,
                  "the poisoned lane is not in /metrics:\n"
                      << metrics);
    const int code = s.svc->stop();
    CHECK_MESSAGE(code == 7, "a service that left an unconfirmed stop exited " << code << "\n" << s.svc->log());
    json stopped;
    for (const auto& line : s.svc->proc->lines()) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.value("event", "") == "stopped") stopped = j;
    }
    CHECK_MESSAGE(stopped.value("unconfirmed", -1) == 1, "the stopped line: " << stopped.dump());
    CHECK(stopped.value("level", "") == "error");
  }
}

}  // namespace integration_service
