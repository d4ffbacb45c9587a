// service-via.cpp — `git-courier push --via SOCKET` against the real
// service (`git-courier serve`, the shipped binary) and the fixture server
// (TLS, git http-backend, requests held on demand): the same outcomes, JSON
// and exit codes as a local push, Ctrl-C revoking through the service, the
// service's configuration flags refused, and a service that is not there.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "cli/args.hpp"
#include "fixture_server.hpp"
#include "service_support.hpp"
#include "report/outcome_json.hpp"
#include "support.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_service_via {

using namespace courier;
using nlohmann::json;

namespace {

// One GET or DELETE to the service with curl: {status, body}.
std::pair<int, std::string> api(const std::string& socket, const std::string& method, const std::string& target) {
  auto r = test::run({"/usr/bin/curl", "-sS", "-X", method, "--unix-socket", socket, "-o", "/dev/stdout", "-w",
                      "\n%{http_code}", "http://localhost" + target});
  const auto nl = r.out.rfind('\n');
  if (r.exit_code != 0 || nl == std::string::npos) return {0, r.err};
  return {std::atoi(r.out.c_str() + nl + 1), r.out.substr(0, nl)};
}

// `git-courier serve` on a socket in a temporary directory, trusting the
// fixture server's CA, with repositories under `root`; started and waited
// for by a fact (GET /healthz answers), stopped with SIGTERM (its drain)
// at the end. Its log lines go to a file, shown when a check fails.
class Service {
 public:
  Service(const std::string& root, const std::string& ca, std::vector<std::string> extra = {}) {
    socket_ = dir_.path() + "/run/serve.sock";
    log_ = dir_.path() + "/serve.log";
    std::vector<std::string> argv = {COURIER_BINARY,    "serve",
                                     "--socket",        socket_,
                                     "--repo-root",     root,
                                     "--journal",       dir_.path() + "/state/journal.sqlite",
                                     "--lane-dir",      dir_.path() + "/state/lanes",
                                     "--ca-file",       ca,
                                     "--warm",          "1",
                                     "--workers",       "2",
                                     "--drain-timeout", "5s"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::vector<std::string> sh = {"/bin/sh", "-c", "exec \"$@\" 2>>'" + log_ + "'", "sh"};
    for (auto& a : test::clean_env_argv(argv)) sh.push_back(a);
    process_ = std::make_unique<test::LineProcess>(sh);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < until) {
      // Any answer: a service that refuses this peer answers 403.
      if (api(socket_, "GET", "/healthz").first != 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling for the fact, not a proof of order
    }
    FAIL("git-courier serve did not answer /healthz within 30 s: " << log());
  }
  ~Service() { stop(); }

  // SIGTERM: the service drains and exits 0.
  int stop() {
    if (!process_) return exit_code_;
    ::kill(process_->pid(), SIGTERM);
    exit_code_ = process_->wait_exit();
    process_.reset();
    return exit_code_;
  }
  const std::string& socket() const { return socket_; }
  std::string log() const { return std::filesystem::exists(log_) ? test::read_file(log_) : std::string(); }

 private:
  test::TempDir dir_;
  std::string socket_;
  std::string log_;
  std::unique_ptr<test::LineProcess> process_;
  int exit_code_ = -1;
};

// A source repository, and the CLI pushing from it through a service or
// locally.
struct Client {
  test::TempDir dir;
  std::string source;
  std::string tip;

  explicit Client(const std::string& root, int commits = 3) {
    source = root + "/source";
    tip = test::make_source_repo(source, commits);
  }
  std::vector<std::string> via_args(const std::string& socket, const std::string& remote, const std::string& rev,
                                    std::vector<std::string> extra = {}) const {
    std::vector<std::string> a = {COURIER_BINARY, "push",  "--via",           socket,  "--repo", source, "--remote",
                                  remote,         "--ref", "refs/heads/main", "--rev", rev};
    a.insert(a.end(), extra.begin(), extra.end());
    return test::clean_env_argv(a);
  }
  test::RunResult via(const std::string& socket, const std::string& remote, const std::string& rev,
                      std::vector<std::string> extra = {}) const {
    return test::run(via_args(socket, remote, rev, std::move(extra)));
  }
  test::RunResult local(const std::string& remote, const std::string& ca, const std::string& rev,
                        std::vector<std::string> extra = {}) const {
    std::vector<std::string> a = {COURIER_BINARY, "push",
                                  "--repo",       source,
                                  "--remote",     remote,
                                  "--ref",        "refs/heads/main",
                                  "--rev",        rev,
                                  "--ca-file",    ca,
                                  "--lane-dir",   dir.path() + "/lanes",
                                  "--journal",    dir.path() + "/journal.sqlite"};
    a.insert(a.end(), extra.begin(), extra.end());
    return test::run(test::clean_env_argv(a));
  }
};

std::string ref_of(const std::string& git_dir) {
  auto r = test::git({"--git-dir", git_dir, "rev-parse", "--verify", "-q", "refs/heads/main"});
  return r.ok() ? r.out.substr(0, 40) : std::string();
}

json parse_json(const std::string& out) {
  json j = json::parse(out, nullptr, false);
  REQUIRE_MESSAGE(!j.is_discarded(), "stdout is not one JSON object: " << out);
  return j;
}

std::set<std::string> keys_of(const json& j) {
  std::set<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
  return out;
}

// A stand-in for the service (fixtures/scripted_service.py) that answers the
// submission and the events exactly as written here: a confused or hostile
// service. Started: it has said `ready` (its socket is bound).
struct ScriptedService {
  test::TempDir dir;
  std::string socket;
  std::unique_ptr<test::LineProcess> process;

  ScriptedService(int submit_status, const json& submit_answer, const std::vector<json>& events) {
    socket = dir.path() + "/serve.sock";
    test::write_file(dir.path() + "/submit.json", submit_answer.dump());
    std::string lines;
    for (const auto& e : events) lines += e.dump() + "\n";
    test::write_file(dir.path() + "/events.ndjson", lines);
    process = std::make_unique<test::LineProcess>(
        std::vector<std::string>{"/usr/bin/python3", COURIER_SCRIPTED_SERVICE, socket, std::to_string(submit_status),
                                 dir.path() + "/submit.json", dir.path() + "/events.ndjson"});
    REQUIRE_FALSE(process->wait_line("ready", 20'000).empty());
  }
};

constexpr const char* kScriptedRemote = "https://127.0.0.1:9/r.git";

// The finished event of delivery `id`, told for `facts`.
json finished(const Outcome& o, const report::OutcomeFacts& facts) {
  return json{{"seq", 1}, {"event", "finished"}, {"outcome", report::outcome_to_json(o, facts)}};
}

Outcome outcome(OutcomeKind kind, const std::string& id, const std::string& reason) {
  Outcome o;
  o.kind = kind;
  o.delivery_id = id;
  o.reason = reason;
  o.remote_effect = kind == OutcomeKind::delivered ? RemoteEffect::applied : RemoteEffect::refused;
  o.kill_domain = "process_group";
  return o;
}

// Bytes a terminal obeys: ESC, BEL, CR, and C1's CSI in UTF-8.
bool terminal_control_in(const std::string& text) {
  return text.find('\x1b') != std::string::npos || text.find('\x07') != std::string::npos ||
         text.find('\r') != std::string::npos || text.find("\xc2\x9b") != std::string::npos;
}

}  // namespace

TEST_SUITE("service-via") {
  TEST_CASE(
      "service API: push --via delivers (the ref read back with git), then up to date, then rejects a "
      "non-fast-forward with a local push's exit code and --json document") {
    test::FixtureServer server;
    Client c(server.scratch_dir(), 3);
    Service service(server.scratch_dir(), server.ca_file());
    server.create_bare_repo("via");
    server.create_bare_repo("local");

    auto r = c.via(service.socket(), server.url("via"), "HEAD", {"--json"});
    CHECK_MESSAGE(r.exit_code == cli::kExitOk, r.err << service.log());
    json j = parse_json(r.out);
    CHECK(j["outcome"] == "delivered");
    CHECK(j["remote_effect"] == "applied");
    CHECK(j["oid"] == c.tip);
    CHECK(ref_of(server.repo_path("via")) == c.tip);

    // The same document as a local push prints: the same fields.
    auto l = c.local(server.url("local"), server.ca_file(), "HEAD", {"--json"});
    REQUIRE_MESSAGE(l.exit_code == cli::kExitOk, l.err);
    CHECK(keys_of(j) == keys_of(parse_json(l.out)));

    r = c.via(service.socket(), server.url("via"), "HEAD", {"--json"});
    CHECK(r.exit_code == cli::kExitOk);
    CHECK(parse_json(r.out)["outcome"] == "up_to_date");

    // git's words through the service too (X-CLI1): -C, <remote> <refspec>.
    auto words = test::run(test::clean_env_argv({COURIER_BINARY, "-C", c.source, "push", "--via", service.socket(),
                                                 server.url("via"), "HEAD~1:refs/heads/side", "--json"}));
    CHECK_MESSAGE(words.exit_code == cli::kExitOk, words.err << service.log());
    CHECK(parse_json(words.out)["ref"] == "refs/heads/side");
    CHECK(test::git_ok({"--git-dir", server.repo_path("via"), "rev-parse", "refs/heads/side"}) ==
          test::git_ok({"rev-parse", "HEAD~1"}, c.source));

    // Without --json: the human line, as a local push says it.
    r = c.via(service.socket(), server.url("via"), "HEAD~1");
    auto lr = c.local(server.url("local"), server.ca_file(), "HEAD~1");
    CHECK(r.exit_code == cli::kExitRejected);
    CHECK(r.exit_code == lr.exit_code);
    CHECK_MESSAGE(r.err.find("rejected (nothing sent)") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find("non-fast-forward") != std::string::npos, r.err);
    CHECK(ref_of(server.repo_path("via")) == c.tip);
    CHECK(server.count().count("POST /via.git/git-receive-pack") == 2);  // main, then side
    CHECK_MESSAGE(service.stop() == 0, service.log());
  }

  TEST_CASE(
      "S4 via: Ctrl-C to push --via while the remote holds its POST revokes through the service: "
      "exit 5, outcome revoked, the ref unchanged") {
    test::FixtureServer server;
    Client c(server.scratch_dir(), 2);
    Service service(server.scratch_dir(), server.ca_file());
    server.create_bare_repo("held");
    server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    // Long enough that only a revocation ends it before a person would.
    test::LineProcess cli(c.via_args(service.socket(), server.url("held"), "HEAD", {"--json", "--deadline", "8s"}));
    REQUIRE_MESSAGE(server.wait_for_held(20'000).has_value(), service.log());
    ::kill(cli.pid(), SIGINT);
    const std::string out = cli.wait_line("{", 30'000);
    const int code = cli.wait_exit();
    json j = parse_json(out);
    CHECK_MESSAGE(j["outcome"] == "revoked", "Ctrl-C did not revoke the delivery through the service: " << out);
    CHECK(code == cli::kExitRevoked);
    CHECK(j["child"]["reaped"] == true);
    CHECK_FALSE(sys::pid_exists(static_cast<pid_t>(j["child"]["pid"].get<std::int64_t>())));
    // The service says so too.
    auto [status, body] = api(service.socket(), "GET", "/v1/deliveries/" + j["delivery_id"].get<std::string>());
    CHECK(status == 200);
    CHECK(parse_json(body)["outcome"]["outcome"] == "revoked");
    server.reset_faults();
    server.release();
    CHECK(ref_of(server.repo_path("held")).empty());
    CHECK_MESSAGE(service.stop() == 0, service.log());
  }

  TEST_CASE("X-CLI6 via: push --via carries several refspecs and a deletion to the service; the remote has the set") {
    test::FixtureServer server;
    Client c(server.scratch_dir(), 3);
    Service service(server.scratch_dir(), server.ca_file());
    server.create_bare_repo("set");
    test::git_ok({"-c", "user.name=Seller", "-c", "user.email=seller@example.com", "tag", "-a", "v1", "-m", "one"},
                 c.source);
    const auto push = [&](std::vector<std::string> words) {
      std::vector<std::string> a = {COURIER_BINARY, "-C", c.source, "push", "--via", service.socket(), "--json"};
      a.insert(a.end(), words.begin(), words.end());
      return test::run(test::clean_env_argv(a));
    };
    const std::string url = server.url("set");
    auto both = push({url, "main", "v1", "HEAD~1:refs/heads/older"});
    CHECK_MESSAGE(both.exit_code == cli::kExitOk, both.err << both.out << service.log());
    const auto refs = [&] {
      return test::git_ok({"--git-dir", server.repo_path("set"), "for-each-ref", "--format=%(refname) %(objecttype)"});
    };
    CHECK(refs() == "refs/heads/main commit\nrefs/heads/older commit\nrefs/tags/v1 tag");
    // A deletion and a non-atomic set, through the service as well.
    auto gone = push({"--no-atomic", url, ":refs/heads/older", "main"});
    CHECK_MESSAGE(gone.exit_code == cli::kExitOk, gone.err << gone.out);
    CHECK(refs() == "refs/heads/main commit\nrefs/tags/v1 tag");
    CHECK_MESSAGE(service.stop() == 0, service.log());
  }

  TEST_CASE("service API: push --via with a --deadline shorter than a held POST ends deadline_killed, exit 4") {
    test::FixtureServer server;
    Client c(server.scratch_dir(), 2);
    Service service(server.scratch_dir(), server.ca_file());
    server.create_bare_repo("slow");
    server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    auto r = c.via(service.socket(), server.url("slow"), "HEAD", {"--json", "--deadline", "1500ms"});
    CHECK_MESSAGE(r.exit_code == cli::kExitDeadline, r.err);
    json j = parse_json(r.out);
    CHECK(j["outcome"] == "deadline_killed");
    CHECK(j.contains("deadline_overrun_ms"));
    server.reset_faults();
    server.release();
    CHECK(ref_of(server.repo_path("slow")).empty());
    CHECK_MESSAGE(service.stop() == 0, service.log());
  }

  TEST_CASE("service API: a request the service refuses is a usage error (exit 2) naming why; nothing is pushed") {
    test::FixtureServer server;
    Client c(server.scratch_dir(), 2);
    Service service(server.scratch_dir(), server.ca_file());
    server.create_bare_repo("refused");
    auto r = c.via(service.socket(), server.url("refused"), "HEAD", {"--credential", "nosuch", "--json"});
    CHECK(r.exit_code == cli::kExitUsage);
    json j = parse_json(r.out);
    CHECK(j["outcome"] == "usage");
    CHECK_MESSAGE(j["message"].get<std::string>().find("unknown_credential") != std::string::npos, r.out);
    CHECK(server.count().total == 0);
    CHECK_MESSAGE(service.stop() == 0, service.log());
  }

  TEST_CASE("service API: a service that refuses this user's uid is a usage error (exit 2, peer_refused)") {
    test::FixtureServer server;
    Client c(server.scratch_dir(), 2);
    const std::string other = std::to_string(::getuid() + 4242);
    Service service(server.scratch_dir(), server.ca_file(), {"--allow-uid", other});
    server.create_bare_repo("peer");
    auto r = c.via(service.socket(), server.url("peer"), "HEAD");
    CHECK(r.exit_code == cli::kExitUsage);
    CHECK_MESSAGE(r.err.find("peer_refused") != std::string::npos, r.err);
    CHECK(server.count().total == 0);
  }

  TEST_CASE(
      "X-TRACK1 via: push --via to a named remote moves origin/main in the user's repository once the service's "
      "outcome says applied, and leaves it after a refusal") {
    test::FixtureServer server;
    Client c(server.scratch_dir(), 3);
    Service service(server.scratch_dir(), server.ca_file());
    server.create_bare_repo("tracked");
    test::git_ok({"remote", "add", "origin", server.url("tracked")}, c.source);
    const auto tracking = [&] {
      auto r = test::git({"rev-parse", "--verify", "-q", "refs/remotes/origin/main"}, c.source);
      return r.ok() ? r.out.substr(0, 40) : std::string();
    };
    auto r = c.via(service.socket(), "origin", "HEAD~1");
    CHECK_MESSAGE(r.exit_code == cli::kExitOk, r.err << service.log());
    CHECK(ref_of(server.repo_path("tracked")) == test::git_ok({"rev-parse", "HEAD~1"}, c.source));
    CHECK_MESSAGE(tracking() == test::git_ok({"rev-parse", "HEAD~1"}, c.source), "origin/main did not follow --via");
    const std::string reflog = test::git_ok({"reflog", "show", "--format=%gs", "refs/remotes/origin/main"}, c.source);
    CHECK_MESSAGE(reflog.find("update by push") != std::string::npos, reflog);

    // Refused (not a fast-forward): the tracking ref is left where it was.
    test::git_ok({"update-ref", "refs/remotes/origin/main", c.tip}, c.source);
    auto refused = c.via(service.socket(), "origin", "HEAD~2");
    CHECK(refused.exit_code == cli::kExitRejected);
    CHECK(tracking() == c.tip);
    CHECK_MESSAGE(service.stop() == 0, service.log());
  }
}

TEST_SUITE("service-via-usage") {
  TEST_CASE("service API: the service's configuration flags are refused with --via, each naming why (exit 2)") {
    test::TempDir dir;
    const std::string source = dir.path() + "/source";
    test::make_source_repo(source, 1);
    const std::vector<std::vector<std::string>> refused = {{"--auth", "credential"},  {"--ca-file", "/etc/hostname"},
                                                           {"--allow-http-loopback"}, {"--lane-dir", "/tmp"},
                                                           {"--journal", "/tmp/j"},   {"--no-journal"},
                                                           {"--pack-engine", "git"},  {"--read-back"}};
    for (const auto& flags : refused) {
      std::vector<std::string> argv = {COURIER_BINARY, "push",
                                       "--via",        dir.path() + "/none.sock",
                                       "--repo",       source,
                                       "--remote",     "https://127.0.0.1:9/r.git",
                                       "--ref",        "refs/heads/main",
                                       "--rev",        "HEAD",
                                       "--json"};
      argv.insert(argv.end(), flags.begin(), flags.end());
      auto r = test::run(test::clean_env_argv(argv));
      CAPTURE(flags[0]);
      CHECK(r.exit_code == cli::kExitUsage);
      CHECK_MESSAGE(r.err.find(flags[0] + " cannot be given with --via") != std::string::npos, r.err);
      CHECK(parse_json(r.out)["outcome"] == "usage");
    }
    auto r =
        test::run(test::clean_env_argv({COURIER_BINARY, "push", "--credential", "ci", "--repo", source, "--remote",
                                        "https://127.0.0.1:9/r.git", "--ref", "refs/heads/main", "--rev", "HEAD"}));
    CHECK(r.exit_code == cli::kExitUsage);
    CHECK_MESSAGE(r.err.find("--credential names one of the service's credentials") != std::string::npos, r.err);
  }

  TEST_CASE(
      "H1 via: a service's reason, hint and error message reach the terminal without a control character (ESC, OSC, "
      "CR, C1)") {
    test::TempDir dir;
    const std::string source = dir.path() + "/source";
    const std::string tip = test::make_source_repo(source, 1);
    const std::string hostile =
        "\x1b]0;owned\x07\r\x1b[2Jforged line \xc2\x9b"
        "31m";
    const report::OutcomeFacts facts{kScriptedRemote, "refs/heads/main", tip, "\x1b[31mhint " + hostile};
    const std::vector<std::string> push = {COURIER_BINARY,  "push",  "--repo",          source,  "--remote",
                                           kScriptedRemote, "--ref", "refs/heads/main", "--oid", tip};
    {
      ScriptedService svc(202, json{{"id", "d-1"}, {"state", "queued"}, {"attempt", 1}},
                          {finished(outcome(OutcomeKind::rejected, "d-1", "reason " + hostile), facts)});
      std::vector<std::string> argv = push;
      argv.insert(argv.end(), {"--via", svc.socket});
      auto r = test::run(test::clean_env_argv(argv));
      CHECK(r.exit_code == cli::kExitRejected);
      CHECK_MESSAGE(r.err.find("forged line") != std::string::npos, r.err);  // told, made harmless
      CHECK_MESSAGE(!terminal_control_in(r.err), r.err);
    }
    {
      ScriptedService svc(400, json{{"error", {{"code", "bad_field"}, {"message", "no " + hostile}, {"field", "ref"}}}},
                          {});
      std::vector<std::string> argv = push;
      argv.insert(argv.end(), {"--via", svc.socket});
      auto r = test::run(test::clean_env_argv(argv));
      CHECK(r.exit_code == cli::kExitUsage);
      CHECK_MESSAGE(r.err.find("forged line") != std::string::npos, r.err);
      CHECK_MESSAGE(!terminal_control_in(r.err), r.err);
    }
  }

  TEST_CASE(
      "J4 via: an outcome for another delivery id, ref, remote or object is refused with exit 9 and never told as this "
      "push's") {
    test::TempDir dir;
    const std::string source = dir.path() + "/source";
    const std::string tip = test::make_source_repo(source, 1);
    const json queued = {{"id", "d-1"}, {"state", "queued"}, {"attempt", 1}};
    const report::OutcomeFacts asked{kScriptedRemote, "refs/heads/main", tip, std::nullopt};
    struct Case {
      std::string what;
      std::string id;
      report::OutcomeFacts facts;
    };
    const std::vector<Case> cases = {
        {"delivery", "d-2", asked},
        {"ref", "d-1", {kScriptedRemote, "refs/heads/other", tip, std::nullopt}},
        {"remote", "d-1", {"https://127.0.0.1:9/other.git", "refs/heads/main", tip, std::nullopt}},
        {"object", "d-1", {kScriptedRemote, "refs/heads/main", std::string(40, 'e'), std::nullopt}},
    };
    const auto run = [&](const ScriptedService& svc, std::vector<std::string> more) {
      std::vector<std::string> argv = {COURIER_BINARY, "push",     "--via",         svc.socket, "--repo",
                                       source,         "--remote", kScriptedRemote, "--ref",    "refs/heads/main",
                                       "--oid",        tip,        "--json"};
      argv.insert(argv.end(), more.begin(), more.end());
      return test::run(test::clean_env_argv(argv));
    };
    for (const auto& c : cases) {
      CAPTURE(c.what);
      ScriptedService svc(202, queued, {finished(outcome(OutcomeKind::delivered, c.id, "ok"), c.facts)});
      auto r = run(svc, {});
      CHECK(r.exit_code == cli::kExitMismatch);
      CHECK(parse_json(r.out)["outcome"] == "service_mismatch");
      CHECK_MESSAGE(r.err.find("another delivery (" + c.what) != std::string::npos, r.err);
      CHECK_MESSAGE(r.err.find("delivered") == std::string::npos, r.err);
    }
    // A replayed outcome (200 at submission) is held to the same.
    ScriptedService replay(
        200,
        json{{"id", "d-1"},
             {"state", "finished"},
             {"replayed", true},
             {"outcome", report::outcome_to_json(outcome(OutcomeKind::delivered, "d-1", "ok"), cases[1].facts)}},
        {});
    CHECK(run(replay, {}).exit_code == cli::kExitMismatch);
    // The service took another id than --delivery-id asked for.
    ScriptedService renamed(202, queued, {finished(outcome(OutcomeKind::delivered, "d-1", "ok"), asked)});
    auto r = run(renamed, {"--delivery-id", "mine"});
    CHECK(r.exit_code == cli::kExitMismatch);
    CHECK_MESSAGE(r.err.find("--delivery-id mine") != std::string::npos, r.err);
    // The same stand-in telling this delivery's own outcome: delivered, exit 0.
    ScriptedService right(202, queued, {finished(outcome(OutcomeKind::delivered, "d-1", "ok"), asked)});
    auto ok = run(right, {});
    CHECK_MESSAGE(ok.exit_code == cli::kExitOk, ok.err);
    CHECK(parse_json(ok.out)["outcome"] == "delivered");
  }

  TEST_CASE(
      "Q3 via: after a stream that ended before the outcome, a line of another generation numbered below the "
      "client's cursor is taken (the service started its stream again), and the outcome's code is the exit code") {
    test::TempDir dir;
    const std::string source = dir.path() + "/source";
    const std::string tip = test::make_source_repo(source, 1);
    const report::OutcomeFacts asked{kScriptedRemote, "refs/heads/main", tip, std::nullopt};
    const json before = {{"seq", 5'000'002}, {"gen", "aaaa"}, {"event", "queued"}};
    ScriptedService svc(202, json{{"id", "d-1"}, {"state", "queued"}, {"attempt", 1}}, {before});
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" 2>&1", "sh"};
    for (auto& a : test::clean_env_argv({COURIER_BINARY, "push", "--via", svc.socket, "--repo", source, "--remote",
                                         kScriptedRemote, "--ref", "refs/heads/main", "--oid", tip, "--json",
                                         "--deadline", "20s"})) {
      argv.push_back(a);
    }
    test::LineProcess cli(argv);
    // The first stream ended without the outcome: the client follows again.
    REQUIRE_FALSE(cli.wait_line("git-courier: lost the service", 20'000).empty());
    json after = finished(outcome(OutcomeKind::rejected, "d-1", "stale"), asked);
    after["seq"] = 1'000'000;
    after["gen"] = "bbbb";
    test::write_file(svc.dir.path() + "/events.next", after.dump() + "\n");
    std::filesystem::rename(svc.dir.path() + "/events.next", svc.dir.path() + "/events.ndjson");
    // The client's cursor names the generation of the last line it read: a
    // follow request after a cursor of generation bbbb means it read that
    // line and went on following, the outcome in it skipped. That is the
    // first wrong fact; without it the client would wait out its deadline
    // plus the stream's grace before it exits.
    std::string out;
    bool followed_past = false;
    test::wait_for_fact(
        [&] {
          out = cli.wait_line("{", 0);
          followed_past =
              test::read_file(svc.dir.path() + "/events.ndjson.asked").find("after=bbbb:") != std::string::npos;
          return !out.empty() || followed_past;
        },
        30'000, 20'000);
    REQUIRE_MESSAGE(!followed_past, "Q3 via: the line of another generation was skipped as already seen");
    const int code = cli.wait_exit();
    CHECK_MESSAGE(code == cli::kExitRejected, "Q3 via: the line of another generation was skipped as already seen");
    CHECK(parse_json(out)["outcome"] == "rejected");
  }

  TEST_CASE("service API: push --via to a socket nobody listens on exits 3 with service_unavailable") {
    test::TempDir dir;
    const std::string source = dir.path() + "/source";
    test::make_source_repo(source, 1);
    auto r = test::run(
        test::clean_env_argv({COURIER_BINARY, "push", "--via", dir.path() + "/none.sock", "--repo", source, "--remote",
                              "https://127.0.0.1:9/r.git", "--ref", "refs/heads/main", "--rev", "HEAD", "--json"}));
    CHECK(r.exit_code == cli::kExitFailed);
    json j = parse_json(r.out);
    CHECK(j["outcome"] == "service_unavailable");
    CHECK_MESSAGE(j["message"].get<std::string>().find("no service answers at") != std::string::npos, r.out);
  }
}

}  // namespace integration_service_via
