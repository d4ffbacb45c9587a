// cli-early-child.cpp — the CLI's early child: `git-courier push` starts its
// delivery child before its own checks (repository, revision, journal,
// lane), so that the child's exec and library loading overlap them. The
// child gets its job and, by descriptor passing, the lane lock once the
// delivery has its seat; a command that ends before that stops it and
// confirms its stop (S5). The shipped binary against the fixture server;
// the child found by its parent and its descriptors in /proc.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "fixture_server.hpp"
#include "seat/lane.hpp"
#include "support.hpp"
#include "sys/process.hpp"
#include "wire/remote.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli_early_child {

using namespace courier;
using nlohmann::json;

namespace {

struct Early {
  test::TempDir dir;
  std::string source = dir.path() + "/source";
  std::string tip = test::make_source_repo(source, 2);
  std::string lanes = dir.path() + "/lanes";

  std::vector<std::string> push_args(const std::string& repo, const std::string& remote, const std::string& ca,
                                     const std::string& rev) const {
    return {COURIER_BINARY,    "push",   "--repo", repo,        "--remote", remote,       "--ref",
            "refs/heads/main", "--rev",  rev,      "--ca-file", ca,         "--lane-dir", lanes,
            "--no-journal",    "--json", "-v"};
  }
};

// The pids in "<what> <pid>" lines of the CLI's -v log.
std::vector<std::int64_t> pids_after(const std::string& log, const std::string& what) {
  std::vector<std::int64_t> out;
  const std::regex re(what + " ([0-9]+)");
  for (std::sregex_iterator it(log.begin(), log.end(), re), end; it != end; ++it) out.push_back(std::stoll((*it)[1]));
  return out;
}

// The processes whose parent is `parent` (read from /proc/PID/stat).
std::vector<std::int64_t> children_of(int parent) {
  std::vector<std::int64_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(std::stoll(name));
  }
  return out;
}

}  // namespace

TEST_SUITE("cli-early-child") {
  TEST_CASE(
      "S5: the early child of a CLI push whose checks fail (an unknown revision, a missing repository) is "
      "stopped and confirmed, and leaves no process") {
    test::FixtureServer server;
    Early e;
    server.create_bare_repo("r");
    struct Case {
      const char* what;
      std::string repo;
      std::string rev;
    };
    for (const Case& c : {Case{"an unknown revision", e.source, "no-such-branch"},
                          Case{"a missing repository", e.dir.path() + "/missing", "HEAD"}}) {
      CAPTURE(c.what);
      auto r = test::run(e.push_args(c.repo, server.url("r"), server.ca_file(), c.rev), {}, test::Stdin::bytes,
                         test::cli_env());
      CAPTURE(r.err);
      CHECK(r.exit_code == cli::kExitUsage);
      // The child was started before the checks, and had no job.
      const auto spawned = pids_after(r.err, "spawned warm child");
      REQUIRE_MESSAGE(spawned.size() == 1, "the CLI did not start one early child");
      // Stopped by the command itself (killed, reaped, end of file), before
      // it exited: not left to die with its parent.
      const auto killed = pids_after(r.err, "killed child");
      CHECK_MESSAGE(killed == spawned, "the early child was not stopped by the command");
      CHECK_MESSAGE(r.err.find("UNCONFIRMED") == std::string::npos, "its stop was not confirmed");
      CHECK_MESSAGE(!sys::pid_exists(static_cast<pid_t>(spawned.front())), "the early child outlived the command");
    }
    CHECK(server.count().total == 0);  // nothing reached the remote
  }

  TEST_CASE("S6: the CLI's early child takes the lane lock by descriptor passing and holds it during the push") {
    test::FixtureServer server;
    Early e;
    server.create_bare_repo("r");
    server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    const std::string err_file = e.dir.path() + "/stderr";
    // exec: the pid is the CLI's own; its stderr (the -v log) goes to the file.
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" 2>\"$0\"", err_file};
    for (auto& a : e.push_args(e.source, server.url("r"), server.ca_file(), "HEAD")) argv.push_back(a);
    test::LineProcess cli(argv);
    REQUIRE(server.wait_for_held(20'000).has_value());
    // While the POST is held: the CLI's one child holds the lane lock at fd 3.
    const auto kids = children_of(cli.pid());
    REQUIRE_MESSAGE(kids.size() == 1, "the CLI has ", kids.size(), " children during the push");
    const std::string lock = e.lanes + "/" + seat::lane_lock_name(*wire::lane_key(server.url("r")));
    std::error_code ec;
    const auto fd3 = std::filesystem::read_symlink("/proc/" + std::to_string(kids.front()) + "/fd/3", ec);
    CHECK_MESSAGE(fd3.string() == lock, "fd 3 of the CLI's child is ", fd3.string());
    server.release();
    const std::string out = cli.wait_line("{", 20'000);
    CHECK(cli.wait_exit() == cli::kExitOk);
    const std::string err = test::read_file(err_file);
    CAPTURE(err);
    json j = json::parse(out, nullptr, false);
    REQUIRE_MESSAGE(!j.is_discarded(), "stdout is not one JSON object: ", out);
    CHECK(j["outcome"] == "delivered");
    CHECK(j["child"]["pid"] == kids.front());
    // It was the early child (spawned warm, before the checks), not a
    // second one spawned for the turn.
    CHECK(pids_after(err, "spawned warm child") == std::vector<std::int64_t>{kids.front()});
    CHECK(pids_after(err, "spawned child").empty());
    CHECK_FALSE(sys::pid_exists(static_cast<pid_t>(kids.front())));
  }
}

}  // namespace integration_cli_early_child
