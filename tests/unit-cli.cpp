// unit-cli.cpp — argument parsing and the command-line skeleton.
#include <doctest/doctest.h>

#include "cli/args.hpp"
#include "support.hpp"

using namespace courier;
using namespace courier::cli;

namespace {
std::vector<std::string> base() {
  return {"--repo", "/r", "--remote", "https://h/r.git", "--ref", "refs/heads/main", "--oid", std::string(40, 'a')};
}
std::vector<std::string> with(std::vector<std::string> extra) {
  auto v = base();
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}
}  // namespace

TEST_SUITE("cli") {
  TEST_CASE("durations accept ms, s and m and nothing else") {
    CHECK(*parse_duration("500ms") == std::chrono::milliseconds(500));
    CHECK(*parse_duration("150s") == std::chrono::milliseconds(150000));
    CHECK(*parse_duration("2m") == std::chrono::milliseconds(120000));
    for (auto bad : {"", "5", "5h", "-1s", "0s", "1.5s", "s", "99999999999s", "5 s"}) {
      auto r = parse_duration(bad);
      CHECK_MESSAGE(!r.has_value(), bad);
    }
  }

  TEST_CASE("push arguments parse with defaults") {
    auto r = parse_push_args(base());
    REQUIRE(r.has_value());
    CHECK(r->deadline == kDefaultDeadline);
    CHECK(r->auth == "none");
    CHECK_FALSE(r->json);
    auto r2 = parse_push_args(with({"--deadline=2s", "--json", "--quiet", "--auth", "key:/k.pem",
                                    "--allow-http-loopback", "--lane-dir", "/l", "--ca-file", "/ca"}));
    REQUIRE(r2.has_value());
    CHECK(r2->deadline == std::chrono::milliseconds(2000));
    CHECK(r2->json);
    CHECK(r2->auth == "key:/k.pem");
    CHECK(*r2->lane_dir == "/l");
  }

  TEST_CASE("bad push arguments are refused with a message naming the problem") {
    struct Case {
      std::vector<std::string> args;
      const char* needle;
    };
    const std::vector<Case> cases = {
        {with({"--frobnicate"}), "unknown option '--frobnicate'"},
        {with({"--deadline", "soon"}), "--deadline"},
        {with({"--deadline"}), "needs a value"},
        {with({"--auth", "password"}), "--auth must be"},
        {with({"--auth", "key:"}), "needs a file name"},
        {with({"--pack-engine", "fast"}), "--pack-engine must be libgit2 or git"},
        {with({"--rev", "HEAD"}), "exactly one of --oid and --rev"},
        {with({"--json=yes"}), "takes no value"},
        {with({"stray"}), "unexpected argument"},
        {{"--remote", "https://h/r.git", "--ref", "refs/heads/x", "--oid", "a"}, "missing required option --repo"},
        {{"--repo", "/r", "--ref", "refs/heads/x", "--oid", "a"}, "missing required option --remote"},
        {{"--repo", "/r", "--remote", "https://h/", "--oid", "a"}, "missing required option --ref"},
        {{"--repo", "/r", "--remote", "https://h/", "--ref", "x"}, "exactly one of --oid and --rev"},
    };
    for (const auto& c : cases) {
      auto r = parse_push_args(c.args);
      REQUIRE_FALSE(r.has_value());
      CHECK_MESSAGE(r.error().message.find(c.needle) != std::string::npos, r.error().message);
    }
  }

  TEST_CASE("D1: --deadline is at most 24 h; a longer one is a usage error naming the limit") {
    auto day = parse_push_args(with({"--deadline", "1440m"}));
    REQUIRE(day.has_value());
    CHECK(day->deadline == kMaxDeadline);
    for (const char* d : {"1441m", "86401s", "86400001ms", "153722867m", "999999999m"}) {
      CAPTURE(d);
      auto r = parse_push_args(with({"--deadline", d}));
      REQUIRE_FALSE(r.has_value());
      CHECK_MESSAGE(r.error().message.find("limit of 24 h") != std::string::npos, r.error().message);
    }
  }

  TEST_CASE("the binary answers --help, --version and push --help, and refuses unknown commands with exit 2") {
    auto help = test::run({COURIER_BINARY, "--help"});
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("push") != std::string::npos);
    auto version = test::run({COURIER_BINARY, "--version"});
    CHECK(version.exit_code == 0);
    CHECK(version.out.find("git-courier " COURIER_VERSION) != std::string::npos);
    auto push_help = test::run({COURIER_BINARY, "push", "--help"});
    CHECK(push_help.exit_code == 0);
    for (auto flag : {"--repo", "--remote", "--ref", "--oid", "--rev", "--deadline", "--auth", "--ca-file",
                      "--lane-dir", "--allow-http-loopback", "--json", "--quiet"}) {
      CHECK_MESSAGE(push_help.out.find(flag) != std::string::npos, flag);
    }
    auto unknown = test::run({COURIER_BINARY, "frobnicate"});
    CHECK(unknown.exit_code == kExitUsage);
    CHECK(unknown.err.find("unknown command 'frobnicate'") != std::string::npos);
    auto bad_flag = test::run({COURIER_BINARY, "push", "--nope"});
    CHECK(bad_flag.exit_code == kExitUsage);
    CHECK(bad_flag.err.find("unknown option '--nope'") != std::string::npos);
    auto none = test::run({COURIER_BINARY});
    CHECK(none.exit_code == kExitUsage);
  }
}
