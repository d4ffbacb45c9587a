// state-cli.cpp — `--state` on the command line: `log` and `show` read
// a fleet's journal in PostgreSQL (a throwaway server, tests/support/pg_support.hpp),
// and the spellings that are refused exit 2 with the reason, a password
// never printed.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "journal/journal.hpp"
#include "pg_support.hpp"
#include "push_setup.hpp"
#include "support.hpp"
#include "sys/fd.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_state_cli {

using namespace courier;
using namespace courier::journal;

namespace {

const std::vector<std::string> kEnv = {"PATH=/usr/bin:/bin", "HOME=/nonexistent", "XDG_STATE_HOME=/nonexistent"};

test::RunResult courier_cli(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {COURIER_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run(argv, {}, test::Stdin::bytes, kEnv);
}

Submission submission(const std::string& id, const std::string& host) {
  Submission s;
  s.id = id;
  s.repo = "/srv/repos/shop.git";
  s.remote = "https://git.example.com/buyer/shop.git";
  s.lane = "https://git.example.com/buyer/shop";
  s.ref = "refs/heads/main";
  s.oid = std::string(40, 'c');
  s.deadline_unix_ms = 1'900'000'000'123;
  s.submitter = ProcessIdentity{4242, 987654321, "5a1c6e3e-3c2b-4f7e-9d3a-0f1e2d3c4b5a"};
  s.host = host;
  return s;
}

// A server that accepts TCP (the kernel completes the handshake into the
// backlog) and never answers: the port it listens on, the socket held by
// the caller.
int silent_server(sys::ScopedFd& held) {
  held = sys::ScopedFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(held.get() >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(held.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(held.get(), 64) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(held.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
  return ntohs(a.sin_port);
}

// The wall time of one command, in ms.
double timed_ms(const std::vector<std::string>& args, test::RunResult& r) {
  const auto start = std::chrono::steady_clock::now();
  r = courier_cli(args);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The shared objects the dynamic loader mapped while running args (its
// LD_DEBUG=files trace: "file=libpq.so.5 [0]; ..."), one name a line.
std::string loaded_libraries(const std::vector<std::string>& args) {
  std::vector<std::string> env = kEnv;
  env.emplace_back("LD_DEBUG=files");
  std::vector<std::string> argv = {COURIER_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  const test::RunResult r = test::run(argv, {}, test::Stdin::bytes, env);
  std::string out = "\n";
  for (std::string::size_type at = 0; (at = r.err.find("file=", at)) != std::string::npos;) {
    at += 5;
    const auto end = r.err.find_first_of(" \t\n", at);
    out += r.err.substr(at, end - at) + "\n";
  }
  return out;
}

}  // namespace

TEST_SUITE("state-cli") {
  TEST_CASE("X-START1: --version, --help and log --journal do not load libpq; log --state postgres:// does") {
    // A build that links its libraries directly (COURIER_LAZY_LIBS=OFF, the
    // sanitizers) loads everything at start: nothing to prove there.
    if (loaded_libraries({"--version"}).find("\nlibcurl.so") != std::string::npos) {
      MESSAGE("skipped: this git-courier links its libraries directly");
      return;
    }
    test::TempDir dir;
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--version"}, {"--help"}, {"log", "--journal", dir.path() + "/j.sqlite"}}) {
      CAPTURE(args.front());
      CHECK(loaded_libraries(args).find("\nlibpq.so") == std::string::npos);
    }
    CHECK(loaded_libraries({"log", "--state", "postgres://courier@127.0.0.1:1/courier"}).find("\nlibpq.so") !=
          std::string::npos);
  }

  TEST_CASE("J4: log and show --state postgres:// read the deliveries every host journalled, naming the host") {
    std::string missing;
    if (!test::PgCluster::available(&missing)) {
      MESSAGE("skipped: " << missing);
      return;
    }
    test::PgCluster db = test::PgCluster::start();
    {
      auto url = state::parse_state_url(db.url());
      REQUIRE(url.has_value());
      auto a = open_state(*url, "git-courier/host-a/1");
      auto b = open_state(*url, "git-courier/host-b/1");
      REQUIRE(a.has_value());
      REQUIRE(b.has_value());
      REQUIRE((*a)->submit(submission("from-a", "host-a"), 1000).has_value());
      REQUIRE((*b)->submit(submission("from-b", "host-b"), 2000).has_value());
    }
    auto log = courier_cli({"log", "--state", db.url(), "--json"});
    REQUIRE_MESSAGE(log.exit_code == 0, log.err);
    const auto all = nlohmann::json::parse(log.out);
    REQUIRE(all.size() == 2);
    CHECK(all[0]["id"] == "from-b");
    CHECK(all[0]["host"] == "host-b");
    CHECK(all[1]["id"] == "from-a");
    CHECK(all[1]["host"] == "host-a");
    auto show = courier_cli({"show", "from-a", "--state", db.url(), "--json"});
    REQUIRE_MESSAGE(show.exit_code == 0, show.err);
    const auto one = nlohmann::json::parse(show.out);
    CHECK(one["host"] == "host-a");
    CHECK(one["transitions"].size() == 1);
    // Over the Unix socket, libpq's spelling without a host.
    auto local = courier_cli({"show", "from-b", "--state", db.socket_url()});
    CHECK_MESSAGE(local.exit_code == 0, local.err);
    CHECK(local.out.find("delivery from-b") != std::string::npos);
  }

  TEST_CASE("H2: an unreachable --state server is an error naming it without its password") {
    auto r = courier_cli({"log", "--state", "postgres://courier:s3cret@127.0.0.1:1/courier"});
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("127.0.0.1:1/courier") != std::string::npos);
    CHECK(r.err.find("s3cret") == std::string::npos);
    CHECK(r.out.find("s3cret") == std::string::npos);
  }

  TEST_CASE(
      "H2: a password holding '/', '?', '#' or '@' is printed nowhere: push's stderr and --json, log's and serve's "
      "--state messages") {
    test::TempDir t;
    const std::string repo = t.path() + "/source";
    test::make_source_repo(repo, 1);
    for (const std::string mid : {"/", "?", "#", "@", "/a?b#"}) {
      const std::string pw = "Zq9" + mid + "Xw7";
      CAPTURE(pw);
      const auto hidden = [](const test::RunResult& r) {
        for (const std::string& text : {r.out, r.err}) {
          CHECK_MESSAGE(text.find("Zq9") == std::string::npos, text);
          CHECK_MESSAGE(text.find("Xw7") == std::string::npos, text);
        }
      };
      for (const bool json : {false, true}) {
        std::vector<std::string> args = {"push",
                                         "--repo",
                                         repo,
                                         "--remote",
                                         "https://alice:" + pw + "@127.0.0.1:1/r.git",
                                         "--ref",
                                         "refs/heads/main",
                                         "--rev",
                                         "HEAD",
                                         "--lane-dir",
                                         t.path() + "/lanes",
                                         "--no-journal"};
        if (json) args.emplace_back("--json");
        auto push = courier_cli(args);
        CHECK(push.exit_code == 2);
        hidden(push);
      }
      auto log = courier_cli({"log", "--state", "postgres://courier:" + pw + "@127.0.0.1:1/courier"});
      CHECK(log.exit_code != 0);
      CHECK_MESSAGE(log.err.find("***@127.0.0.1:1/courier") != std::string::npos, log.err);
      hidden(log);
      auto serve = courier_cli({"serve", "--repo-root", t.path(), "--socket", t.path() + "/run/serve.sock", "--state",
                                "postgres://courier:" + pw + "@127.0.0.1:1/courier"});
      CHECK(serve.exit_code != 0);
      hidden(serve);
    }
  }

  TEST_CASE(
      "H2: serve takes its --state URL from a private --state-file, and warns when a password is given on the "
      "command line") {
    test::TempDir t;
    const std::string url = "postgres://courier:Zq9Xw7@127.0.0.1:1/courier";
    const std::vector<std::string> serve = {"serve", "--repo-root", t.path(), "--socket", t.path() + "/run/serve.sock"};
    auto with = [&](std::vector<std::string> more) {
      std::vector<std::string> args = serve;
      args.insert(args.end(), more.begin(), more.end());
      return courier_cli(args);
    };
    // On the command line: the service says it is readable in ps (and never shows it).
    auto argv = with({"--state", url});
    CHECK(argv.exit_code != 0);
    CHECK_MESSAGE(argv.err.find("\"event\":\"config_warning\"") != std::string::npos, argv.err);
    CHECK(argv.err.find("--state-file") != std::string::npos);
    CHECK(argv.err.find("Zq9Xw7") == std::string::npos);
    // From a file of mode 0600: used (the unreachable server is named), no warning.
    const std::string file = t.path() + "/state-url";
    test::write_file(file, url + "\n");
    REQUIRE(::chmod(file.c_str(), 0600) == 0);
    auto from_file = with({"--state-file", file});
    CHECK(from_file.exit_code != 0);
    CHECK_MESSAGE(from_file.err.find("127.0.0.1:1/courier") != std::string::npos, from_file.err);
    CHECK(from_file.err.find("config_warning") == std::string::npos);
    CHECK(from_file.err.find("Zq9Xw7") == std::string::npos);
    // A file others may read is refused, its contents unshown; so is naming both.
    REQUIRE(::chmod(file.c_str(), 0644) == 0);
    auto open_file = with({"--state-file", file});
    CHECK(open_file.exit_code == 2);
    CHECK_MESSAGE(open_file.err.find("chmod 600") != std::string::npos, open_file.err);
    CHECK(open_file.err.find("Zq9Xw7") == std::string::npos);
    REQUIRE(::chmod(file.c_str(), 0600) == 0);
    auto both = with({"--state-file", file, "--state", "postgres://127.0.0.1:1/courier"});
    CHECK(both.exit_code == 2);
    CHECK(both.err.find("at most one of --state and --state-file") != std::string::npos);
  }

  TEST_CASE(
      "D1: a --state server that accepts TCP and never answers costs push and log one operation's bound "
      "(kLockWaitMs), connections included") {
    sys::ScopedFd held;
    const std::string url = "postgres://courier@127.0.0.1:" + std::to_string(silent_server(held)) + "/courier";
    test::TempDir dir;
    const std::string tip = test::make_source_repo(dir.path() + "/src", 1);
    constexpr double kDeadlineMs = 1000;
    constexpr double kSlackMs = 500;  // process start, libpq's load, a loaded CI host
    test::RunResult push;
    const double push_ms = timed_ms(
        {"push", "--repo", dir.path() + "/src", "--remote", "https://127.0.0.1:1/r.git", "--ref", "refs/heads/main",
         "--oid", tip, "--deadline", "1s", "--lane-dir", dir.path() + "/lanes", "--state", url, "--quiet"},
        push);
    test::report("D1 silent state server", "push --deadline 1s", push_ms, "ms");
    CHECK(push.exit_code != 0);
    CHECK_MESSAGE(push.err.find("127.0.0.1") != std::string::npos, push.err);
    CHECK_MESSAGE(push_ms < kDeadlineMs + journal::kLockWaitMs + kSlackMs, "push took ", push_ms, " ms");
    test::RunResult log;
    const double log_ms = timed_ms({"log", "--state", url}, log);
    test::report("D1 silent state server", "log", log_ms, "ms");
    CHECK(log.exit_code != 0);
    CHECK_MESSAGE(log_ms < journal::kLockWaitMs + kSlackMs, "log took ", log_ms, " ms");
  }

  TEST_CASE("state URL: --state with --journal, a bare path, or an unknown scheme is a usage error (exit 2)") {
    struct Case {
      std::vector<std::string> args;
      std::string says;
    };
    const std::vector<Case> cases = {
        {{"log", "--state", "postgres://db/courier", "--journal", "/tmp/j.db"}, "at most one of --state and --journal"},
        {{"show", "x", "--state", "/var/lib/j.db"}, "sqlite:/var/lib/j.db"},
        {{"log", "--state", "mysql://db/courier"}, "unknown scheme"},
        {{"push", "--repo", ".", "--remote", "https://h/r.git", "--ref", "refs/heads/m", "--oid", std::string(40, 'a'),
          "--state", "postgres://db/courier", "--no-journal"},
         "at most one of --state and --no-journal"},
        {{"serve", "--repo-root", "/srv", "--state", "postgres://db/courier", "--journal", "/tmp/j.db"},
         "at most one of --state and --journal"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.args[0]);
      auto r = courier_cli(c.args);
      CHECK(r.exit_code == 2);
      CHECK_MESSAGE(r.err.find(c.says) != std::string::npos, r.err);
    }
  }

  TEST_CASE(
      "J4: push --state postgres:// journals the delivery with its host; the same id from another host replays it, "
      "no second POST") {
    std::string missing;
    if (!test::PgCluster::available(&missing)) {
      MESSAGE("skipped: " << missing);
      return;
    }
    test::PgCluster db = test::PgCluster::start();
    test::PushSetup setup;
    setup.server.create_bare_repo("r");
    auto push_from = [&](const std::string& host) {
      return test::run({COURIER_BINARY,  "push",
                        "--repo",        setup.source,
                        "--remote",      setup.server.url("r"),
                        "--ref",         "refs/heads/main",
                        "--oid",         setup.tip,
                        "--ca-file",     setup.server.ca_file(),
                        "--lane-dir",    setup.dir.path() + "/lanes-" + host,
                        "--state",       db.url(),
                        "--host-id",     host,
                        "--delivery-id", "fleet-1",
                        "--quiet",       "--json"},
                       {}, test::Stdin::bytes, kEnv);
    };
    auto first = push_from("host-a");
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    CHECK(nlohmann::json::parse(first.out)["outcome"] == "delivered");
    CHECK(setup.remote_ref("r") == setup.tip);
    CHECK(setup.posts("r") == 1);
    auto second = push_from("host-b");
    REQUIRE_MESSAGE(second.exit_code == 0, second.err);
    CHECK(nlohmann::json::parse(second.out)["outcome"] == "delivered");
    CHECK(setup.posts("r") == 1);
    CHECK(db.sql("SELECT host || ' ' || attempt || ' ' || outcome_kind FROM courier_delivery WHERE id = 'fleet-1'") ==
          "host-a 1 delivered");
    CHECK(db.sql("SELECT count(*) FROM courier_entry WHERE id = 'fleet-1' AND step = 'submitted'") == "1");
  }
}

}  // namespace integration_state_cli
