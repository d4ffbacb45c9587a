// cli.cpp — argument parsing and the command-line skeleton.
#include <doctest/doctest.h>

#include "cli/args.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli {

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
  TEST_CASE("D1: durations read as a user writes them: bare seconds, decimals, h m s ms, largest unit first") {
    using std::chrono::milliseconds;
    const std::vector<std::pair<const char*, long long>> good = {
        {"90", 90'000},           {"1.5", 1'500},     {"90s", 90'000},      {"1.5s", 1'500},    {"500ms", 500},
        {"2m", 120'000},          {"1h", 3'600'000},  {"1h30m", 5'400'000}, {"2m30s", 150'000}, {"1m500ms", 60'500},
        {"1h2m3s4ms", 3'723'004}, {"0.25h", 900'000}, {"1.001s", 1'001},    {"0s500ms", 500},   {"150s", 150'000},
    };
    for (const auto& [text, ms] : good) {
      const std::string duration = text;
      CAPTURE(duration);
      auto r = parse_duration(text);
      REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.error().message));
      CHECK(*r == milliseconds(ms));
    }
  }

  TEST_CASE("D1: a bad duration is refused with a message that says what would parse") {
    for (const char* bad :
         {"",   "0",    "0s",           "0ms",        "0h0m", "-1s",  "-90",   "+5s",    "1.0005s", "0.5ms",
          "5x", "5 s",  " 5s",          "s",          "1.s",  ".5s",  "1..5s", "1h 30m", "30s2m",   "1m1m",
          "1H", "5sec", "99999999999s", "9999999999", "1e3s", "1h30", "soon",  "1,5s"}) {
      const std::string duration = bad;
      CAPTURE(duration);
      auto r = parse_duration(bad);
      REQUIRE_FALSE(r.has_value());
      CHECK_MESSAGE(r.error().message.find("use a number of seconds (90, 1.5)") != std::string::npos,
                    r.error().message);
      CHECK_MESSAGE(r.error().message.find("1h30m") != std::string::npos, r.error().message);
    }
    CHECK(parse_duration("1.0005s").error().message.find("finer than a millisecond") != std::string::npos);
    CHECK(parse_duration("30s2m").error().message.find("largest first") != std::string::npos);
    CHECK(parse_duration("0h0m").error().message.find("longer than zero") != std::string::npos);
  }

  TEST_CASE("D1: --deadline takes every duration form and keeps the 24 h limit") {
    for (auto [text, ms] :
         {std::pair{"90", 90'000LL}, {"1.5s", 1'500LL}, {"1h30m", 5'400'000LL}, {"24h", 86'400'000LL}}) {
      const std::string duration = text;
      CAPTURE(duration);
      auto r = parse_push_args(with({"--deadline", text}));
      REQUIRE(r.has_value());
      CHECK(r->deadline == std::chrono::milliseconds(ms));
    }
    for (const char* d : {"24h1ms", "25h", "23h61m"}) {
      const std::string duration = d;
      CAPTURE(duration);
      auto r = parse_push_args(with({"--deadline", d}));
      REQUIRE_FALSE(r.has_value());
      CHECK_MESSAGE(r.error().message.find("limit of 24 h") != std::string::npos, r.error().message);
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
        {with({"--pack-engine", "fast"}), "--pack-engine must be auto, libgit2 or git"},
        {with({"--rev", "HEAD"}), "at most one of --oid and --rev"},
        {with({"--json=yes"}), "takes no value"},
        {with({"stray"}), "the remote is given twice"},
        {{"--mirror", "origin"}, "git would push every ref"},
        {{"--repo", "/r", "--remote", "https://h/", "--ref", "x"}, "needs --rev REV or --oid OID"},
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

}  // namespace integration_cli
