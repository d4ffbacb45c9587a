// cli-tracking.cpp — what the shipped CLI keeps and tells after a push, as
// git does, against the fixture server and real repositories read back with
// git: the remote-tracking ref moved only after a push that landed
// (X-TRACK1), `log` and `show` that never create a journal (X-RO1), the
// output papercuts (X-OUT1) and the lines that say what a push waits for or
// what a deadline interrupted (X-OUT2).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "fixture_server.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli_tracking {

using namespace courier;
using nlohmann::json;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A source repository with a remote named origin at the fixture server.
struct Tracked {
  test::TempDir dir;
  std::string source;
  std::string lanes;
  std::string remote_url;
  std::string ca;

  Tracked(test::FixtureServer& server, const std::string& repo, int commits = 3) {
    source = dir.path() + "/source";
    test::make_source_repo(source, commits);
    lanes = dir.path() + "/lanes";
    server.create_bare_repo(repo);
    remote_url = server.url(repo);
    ca = server.ca_file();
    test::git_ok({"remote", "add", "origin", remote_url}, source);
  }

  std::vector<std::string> args(const std::string& rev, std::vector<std::string> extra = {}) const {
    std::vector<std::string> a = {COURIER_BINARY,    "push",  "--repo", source,      "--remote", "origin",     "--ref",
                                  "refs/heads/main", "--rev", rev,      "--ca-file", ca,         "--lane-dir", lanes};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  test::RunResult push(const std::string& rev, std::vector<std::string> extra = {}) const {
    return test::run(args(rev, std::move(extra)), {}, test::Stdin::bytes, test::cli_env());
  }

  std::string rev(const std::string& spec) const { return test::git_ok({"rev-parse", spec}, source); }

  // refs/remotes/origin/main ("" when absent).
  std::string tracking() const {
    auto r = test::git({"rev-parse", "--verify", "-q", "refs/remotes/origin/main"}, source);
    return r.ok() ? r.out.substr(0, 40) : std::string();
  }

  void commit(const std::string& message) const {
    test::git_ok({"commit", "-q", "--allow-empty", "-m", message}, source);
  }
};

std::string ref_of(const std::string& git_dir) {
  auto r = test::git({"--git-dir", git_dir, "rev-parse", "--verify", "-q", "refs/heads/main"});
  return r.ok() ? r.out.substr(0, 40) : std::string();
}

json parse_json(const std::string& out) {
  json j = json::parse(out, nullptr, false);
  REQUIRE_MESSAGE(!j.is_discarded(), "stdout is not one JSON object: ", out);
  return j;
}

}  // namespace

TEST_SUITE("cli-updates") {
  TEST_CASE(
      "X-TRACK1: two bare --force-with-lease pushes in a row, a new commit between, both land as in git; "
      "origin/main follows with git's reflog message") {
    test::FixtureServer server;
    Tracked t(server, "lease");
    auto first = t.push("HEAD", {"--force-with-lease", "--no-journal"});
    CHECK_MESSAGE(first.exit_code == cli::kExitOk, first.err);
    CHECK(ref_of(server.repo_path("lease")) == t.rev("HEAD"));
    CHECK_MESSAGE(t.tracking() == t.rev("HEAD"), "origin/main did not follow the push");
    const std::string reflog = test::git_ok({"reflog", "show", "--format=%gs", "refs/remotes/origin/main"}, t.source);
    CHECK_MESSAGE(has(reflog, "update by push"), reflog);

    t.commit("one more");
    auto second = t.push("HEAD", {"--force-with-lease", "--no-journal"});
    CHECK_MESSAGE(second.exit_code == cli::kExitOk, "the second bare lease was refused: " << second.err);
    CHECK(ref_of(server.repo_path("lease")) == t.rev("HEAD"));
    CHECK(t.tracking() == t.rev("HEAD"));

    // A URL has no remote-tracking ref: nothing is written for it.
    test::git_ok({"update-ref", "-d", "refs/remotes/origin/main"}, t.source);
    std::vector<std::string> by_url = t.args("HEAD~1", {"--force", "--no-journal"});
    by_url[5] = t.remote_url;
    auto pushed = test::run(by_url, {}, test::Stdin::bytes, test::cli_env());
    CHECK_MESSAGE(pushed.exit_code == cli::kExitOk, pushed.err);
    CHECK(t.tracking().empty());
  }

  TEST_CASE(
      "X-TRACK1 X-OUT1: origin/main does not move after a possible outcome, though the remote applied it; "
      "it moves once a push sees the remote there; the read-back is said in people's time") {
    test::FixtureServer server;
    Tracked t(server, "maybe");
    // Nothing there yet, and the connection lost before an answer: the
    // read-back finds the ref absent, and says so.
    server.close_after_headers(test::RequestMatch::next("POST", "git-receive-pack"), test::CloseMode::none, false);
    auto none = t.push("HEAD", {"--no-journal", "--read-back"});
    CHECK(none.exit_code != cli::kExitOk);
    CHECK_MESSAGE(has(none.err, "the remote's ref was absent"), none.err);
    CHECK_MESSAGE(!has(none.err, "000000000000"), none.err);
    server.reset_faults();

    // The backend runs (the ref moves at the remote), then the connection
    // closes without an answer: nothing was observed.
    server.close_after_headers(test::RequestMatch::next("POST", "git-receive-pack"), test::CloseMode::none, true);
    auto cut = t.push("HEAD", {"--no-journal", "--json", "--read-back"});
    CHECK(cut.exit_code != cli::kExitOk);
    json j = parse_json(cut.out);
    REQUIRE_MESSAGE(j["remote_effect"] == "possible", cut.out);
    REQUIRE(ref_of(server.repo_path("maybe")) == t.rev("HEAD"));
    CHECK_MESSAGE(t.tracking().empty(), "the tracking ref moved after a possible outcome");
    server.reset_faults();

    // Told to a person: the read-back at a human time, never raw milliseconds.
    auto told = t.push("HEAD~1", {"--no-journal", "--read-back", "--force"});
    CHECK(told.exit_code == cli::kExitOk);
    CHECK_MESSAGE(t.tracking() == t.rev("HEAD~1"), told.err);

    server.close_after_headers(test::RequestMatch::next("POST", "git-receive-pack"), test::CloseMode::none, false);
    auto lost = t.push("HEAD", {"--no-journal", "--read-back"});
    CHECK(lost.exit_code != cli::kExitOk);
    CHECK_MESSAGE(has(lost.err, "read-back at "), lost.err);
    CHECK_MESSAGE(has(lost.err, " UTC: the remote's ref was "), lost.err);
    CHECK_MESSAGE(!has(lost.err, "ms (unix)"), lost.err);
    CHECK_MESSAGE(t.tracking() == t.rev("HEAD~1"), "the tracking ref moved after a possible outcome");
    server.reset_faults();

    // Up to date: the remote is seen at the id, so the tracking ref follows.
    test::git_ok({"update-ref", "-d", "refs/remotes/origin/main"}, t.source);
    test::git_ok({"--git-dir", server.repo_path("maybe"), "update-ref", "refs/heads/main", t.rev("HEAD")});
    auto same = t.push("HEAD", {"--no-journal", "--json"});
    CHECK(same.exit_code == cli::kExitOk);
    CHECK(parse_json(same.out)["outcome"] == "up_to_date");
    CHECK(t.tracking() == t.rev("HEAD"));

    // A refusal leaves it alone.
    test::git_ok({"update-ref", "refs/remotes/origin/main", t.rev("HEAD~2")}, t.source);
    auto refused = t.push("HEAD~1", {"--no-journal"});
    CHECK(refused.exit_code == cli::kExitRejected);
    CHECK(t.tracking() == t.rev("HEAD~2"));
  }

  TEST_CASE("X-RO1: log and show on a missing journal create neither it nor its directory, and say so") {
    test::TempDir dir;
    const std::string parent = dir.path() + "/nowhere";
    const std::string journal = parent + "/j.sqlite";
    for (const std::vector<std::string>& cmd : {std::vector<std::string>{COURIER_BINARY, "log", "--journal", journal},
                                                {COURIER_BINARY, "show", "d-1", "--journal", journal}}) {
      auto r = test::run(cmd, {}, test::Stdin::bytes, test::cli_env());
      CAPTURE(r.err);
      CHECK(r.exit_code == cli::kExitFailed);
      CHECK(has(r.err, journal + ": does not exist"));
      CHECK_MESSAGE(!std::filesystem::exists(parent), "a read-only command created the journal's directory");
    }
    // An empty directory keeps being empty.
    std::filesystem::create_directories(parent);
    auto r = test::run({COURIER_BINARY, "log", "--journal", journal}, {}, test::Stdin::bytes, test::cli_env());
    CHECK(r.exit_code == cli::kExitFailed);
    CHECK_MESSAGE(std::filesystem::is_empty(parent), "log created the journal");
  }

  TEST_CASE(
      "X-OUT1: a forced non-fast-forward says forced update; a small upload shows no rate of 0 bytes/s; a "
      "server's body keeps its tab and shows no escaped line end") {
    test::FixtureServer server;
    Tracked t(server, "force", 4);
    auto up = t.push("HEAD", {"--no-journal", "--progress"});
    CHECK_MESSAGE(up.exit_code == cli::kExitOk, up.err);
    CHECK_MESSAGE(has(up.err, "Writing objects: 100%"), up.err);
    CHECK_MESSAGE(!has(up.err, "| 0 bytes/s"), up.err);
    CHECK_MESSAGE(!has(up.err, "forced update"), up.err);
    auto back = t.push("HEAD~2", {"--no-journal", "--force"});
    CHECK_MESSAGE(back.exit_code == cli::kExitOk, back.err);
    CHECK_MESSAGE(has(back.err, ", forced update, "), back.err);

    server.respond(test::RequestMatch::next("POST", "git-receive-pack"), 500, "", "no room\tto spare\n",
                   {{"Content-Type", "text/plain"}});
    auto refused = t.push("HEAD", {"--no-journal"});
    CHECK(refused.exit_code != cli::kExitOk);
    CHECK_MESSAGE(has(refused.err, "no room\tto spare"), refused.err);
    CHECK_MESSAGE(!has(refused.err, "\\x0a"), refused.err);
    CHECK_MESSAGE(!has(refused.err, "\\x09"), refused.err);
  }

  TEST_CASE("X-OUT1: a replayed outcome says so and claims no child and no timings of its own; show escapes once") {
    test::FixtureServer server;
    Tracked t(server, "replay");
    // A hook that refuses with a tab and a BEL in its words.
    const std::string hook = server.repo_path("replay") + "/hooks/pre-receive";
    test::write_file(hook, "#!/bin/sh\nprintf 'ask\\tthe owner\\a\\n' >&2\nexit 1\n");
    REQUIRE(::chmod(hook.c_str(), 0755) == 0);
    const std::string journal = t.dir.path() + "/state/journal.db";
    auto first = t.push("HEAD", {"--journal", journal, "--delivery-id", "d-replay", "--json"});
    CHECK_MESSAGE(first.exit_code == cli::kExitRejected, first.err);
    CHECK(parse_json(first.out)["child"].is_object());
    auto again = t.push("HEAD", {"--journal", journal, "--delivery-id", "d-replay", "--json"});
    CHECK(again.exit_code == cli::kExitRejected);
    json j = parse_json(again.out);
    CHECK(j["replayed"] == true);
    CHECK_MESSAGE(j["child"].is_null(), again.out);
    CHECK_MESSAGE(j["timings_ms"].is_null(), again.out);
    auto shown =
        test::run({COURIER_BINARY, "show", "d-replay", "--journal", journal}, {}, test::Stdin::bytes, test::cli_env());
    CHECK(shown.exit_code == cli::kExitOk);
    // The detail's JSON as written: a tab as \t, the escaped BEL's backslash
    // once escaped by JSON, never twice.
    CHECK_MESSAGE(has(shown.out, "ask\\tthe owner\\\\x07"), shown.out);
    CHECK_MESSAGE(!has(shown.out, "\\\\\\\\"), shown.out);
  }

  TEST_CASE(
      "X-OUT2: with -v off a terminal a lane wait is said when it starts, naming its holder, and when it ends; "
      "a deadline kill names the phase it interrupted and the --deadline") {
    test::FixtureServer server;
    Tracked t(server, "wait");
    server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    test::LineProcess one(t.args("HEAD~1", {"--no-journal", "--json"}));
    auto held = server.wait_for_held(20'000);
    REQUIRE(held.has_value());
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" 2>&1", "sh"};
    for (auto& a : t.args("HEAD", {"--no-journal", "-v"})) argv.push_back(a);
    test::LineProcess two(argv);
    const std::string waiting = two.wait_line("waiting for lane", 20'000);
    CHECK_MESSAGE(has(waiting, "(held by pid "), waiting);
    server.release(held->request);
    CHECK(one.wait_exit() == 0);
    const std::string freed = two.wait_line("lane ", 20'000);
    CHECK_MESSAGE(has(freed, " is free after "), freed);
    CHECK(two.wait_exit() == 0);

    server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    test::git_ok({"commit", "-q", "--allow-empty", "-m", "later"}, t.source);
    auto killed = t.push("HEAD", {"--no-journal", "--deadline", "1500ms"});
    server.reset_faults();
    server.release();
    CHECK(killed.exit_code == cli::kExitDeadline);
    CHECK_MESSAGE(has(killed.err, "deadline reached during the upload (the POST had begun)"), killed.err);
    CHECK_MESSAGE(has(killed.err, "hint: the deadline was --deadline 1500 ms"), killed.err);
  }
}

}  // namespace integration_cli_tracking
