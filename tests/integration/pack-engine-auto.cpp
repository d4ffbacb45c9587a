// pack-engine-auto.cpp — the automatic pack engine (the default): git
// when a usable git is found, libgit2 when none is; a pinned engine is
// honoured; the outcome, the CLI's --json and -v say which engine ran. Real
// pushes through the TLS fixture server, read back with git.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "courier/courier.hpp"
#include "push_setup.hpp"
#include "child/git_version.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_pack_engine_auto {

using namespace courier;
using nlohmann::json;

namespace {

using Setup = test::PushSetup;

// The shipped CLI's push of `rev` to the fixture server's repository `r`,
// with no credentials (the credential helper mode would need git itself).
std::vector<std::string> cli_push(const Setup& s, const std::string& rev, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {COURIER_BINARY, "push",
                                "--repo",       s.source,
                                "--remote",     s.server.url("r"),
                                "--ref",        "refs/heads/main",
                                "--rev",        rev,
                                "--ca-file",    s.server.ca_file(),
                                "--lane-dir",   s.dir.path() + "/lanes",
                                "--auth",       "none",
                                "--no-journal", "--json"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// cli_env() with PATH replaced by `path`.
std::vector<std::string> env_with_path(const std::string& path) {
  std::vector<std::string> env = test::cli_env();
  for (auto& e : env) {
    if (e.rfind("PATH=", 0) == 0) e = "PATH=" + path;
  }
  return env;
}

json outcome_json(const test::RunResult& r) {
  json j = json::parse(r.out, nullptr, false);
  REQUIRE_MESSAGE(!j.is_discarded(), (std::string("stdout is not one JSON object: ") + r.out + r.err));
  return j;
}

// A stand-in "git" that only answers --version, with `version`.
std::string fake_git(const std::string& dir, const std::string& version) {
  const std::string path = dir + "/fake-git-" + version;
  test::write_file(path, "#!/bin/sh\necho 'git version " + version + "'\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

bool fsck_clean(Setup& s) { return test::git({"--git-dir", s.server.repo_path("r"), "fsck", "--strict"}).ok(); }

}  // namespace

TEST_SUITE("pack-engine") {
  TEST_CASE("X-ENG1: with git on PATH the CLI's default engine is git; --json and -v say so, read back") {
    Setup s(3);
    s.server.create_bare_repo("r");
    auto r = test::run(cli_push(s, "HEAD", {"-v"}), {}, test::Stdin::bytes, test::cli_env());
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    json j = outcome_json(r);
    CHECK(j["outcome"] == "delivered");
    CHECK_MESSAGE(j["pack_engine"] == "git", (std::string("engine reported: ") + j["pack_engine"].dump()));
    CHECK(r.err.find("pack engine: git") != std::string::npos);
    CHECK(s.remote_ref("r") == s.tip);
    CHECK(fsck_clean(s));
  }

  TEST_CASE("X-ENG1: with no git on PATH the CLI falls back to libgit2 and still delivers, read back") {
    Setup s(3);
    s.server.create_bare_repo("r");
    test::TempDir empty;  // a PATH with no git in it
    auto r = test::run(cli_push(s, "HEAD"), {}, test::Stdin::bytes, env_with_path(empty.path()));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    json j = outcome_json(r);
    CHECK(j["outcome"] == "delivered");
    CHECK(j["pack_engine"] == "libgit2");
    CHECK(s.remote_ref("r") == s.tip);
    CHECK(fsck_clean(s));
  }

  TEST_CASE(
      "X-ENG1: a small push onto history the remote has is packed by libgit2; a new history and a long one "
      "by git") {
    Setup s(20);
    s.server.create_bare_repo("r");
    auto run_auto = [&](const std::string& rev) {
      auto r = test::run(cli_push(s, rev), {}, test::Stdin::bytes, test::cli_env());
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      CHECK(s.remote_ref("r") == s.rev(rev).substr(0, 40));
      return outcome_json(r)["pack_engine"].dump();
    };
    // A remote with none of this history: git, however short the history.
    CHECK_MESSAGE(run_auto("HEAD~19") == "\"git\"", std::string("new history packed by the wrong engine"));
    // One commit on top of what the remote has: libgit2 (starting git costs more).
    CHECK_MESSAGE(run_auto("HEAD~18") == "\"libgit2\"", std::string("small push not packed by libgit2"));
    // 18 commits missing, more than the 16 a small push has: git.
    CHECK_MESSAGE(run_auto("HEAD") == "\"git\"", std::string("long push packed by the wrong engine"));
    CHECK(fsck_clean(s));
  }

  TEST_CASE("X-ENG1: a small push onto history the remote has starts no git at all, in the parent or the child") {
    Setup s(3);
    s.server.create_bare_repo("r");
    // The git on PATH notes each run of itself, then is the real git.
    test::TempDir bin;
    const std::string marker = bin.path() + "/ran";
    test::write_file(bin.path() + "/git", "#!/bin/sh\necho \"$*\" >> '" + marker + "'\nexec /usr/bin/git \"$@\"\n");
    ::chmod((bin.path() + "/git").c_str(), 0755);
    const auto env = env_with_path(bin.path() + ":/usr/bin:/bin");
    auto first = test::run(cli_push(s, "HEAD~1", {"--pack-engine", "libgit2"}), {}, test::Stdin::bytes, env);
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    ::unlink(marker.c_str());
    auto small = test::run(cli_push(s, "HEAD"), {}, test::Stdin::bytes, env);
    REQUIRE_MESSAGE(small.exit_code == 0, small.err);
    CHECK(outcome_json(small)["pack_engine"] == "libgit2");
    CHECK(s.remote_ref("r") == s.tip);
    CHECK_MESSAGE(!std::filesystem::exists(marker), "git was run for a small push: ", test::read_file(marker));
  }

  TEST_CASE("X-ENG1: a pinned engine is honoured, --pack-engine libgit2 with git on PATH and git after it") {
    Setup s(3);
    s.server.create_bare_repo("r");
    auto first =
        test::run(cli_push(s, "HEAD~1", {"--pack-engine", "libgit2"}), {}, test::Stdin::bytes, test::cli_env());
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    CHECK(outcome_json(first)["pack_engine"] == "libgit2");
    CHECK(s.remote_ref("r") == s.rev("HEAD~1").substr(0, 40));
    auto second = test::run(cli_push(s, "HEAD", {"--pack-engine", "git"}), {}, test::Stdin::bytes, test::cli_env());
    REQUIRE_MESSAGE(second.exit_code == 0, second.err);
    CHECK(outcome_json(second)["pack_engine"] == "git");
    CHECK(s.remote_ref("r") == s.tip);
    CHECK(fsck_clean(s));
  }

  TEST_CASE("X-ENG1: the library's default is automatic, and its Outcome names the engine that ran") {
    Setup s(2);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    DeliveryRequest req = s.request("r", s.tip);
    CHECK(req.pack_engine == PackEngine::automatic);
    Outcome o = ex.submit(req).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(o.pack_engine == std::optional<std::string>("git"));
    CHECK(s.remote_ref("r") == s.tip);
    // Already there: no pack was begun, so no engine is named.
    Outcome again = ex.submit(s.request("r", s.tip)).wait();
    REQUIRE_MESSAGE(again.kind == OutcomeKind::up_to_date, again.reason);
    CHECK_FALSE(again.pack_engine.has_value());
  }

  TEST_CASE("X-ENG1: a host's git older than 2.32.0 is not used; libgit2 delivers instead") {
    Setup s(2);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    DeliveryRequest req = s.request("r", s.tip);
    req.git_program = fake_git(s.dir.path(), "2.31.9");  // would fail any pack-objects it were asked for
    Outcome o = ex.submit(req).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(o.pack_engine == std::optional<std::string>("libgit2"));
    CHECK(s.remote_ref("r") == s.tip);
  }

  TEST_CASE("X-ENG1: a relative git_program is refused before dispatch, not silently replaced") {
    Setup s(1);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    DeliveryRequest req = s.request("r", s.tip);
    req.git_program = "git";
    Outcome o = ex.submit(req).wait();
    CHECK(o.kind == OutcomeKind::failed);
    CHECK(o.reason.find("git_program must be an absolute path") != std::string::npos);
    CHECK_FALSE(o.dispatched);
    CHECK(s.posts("r") == 0);
  }

  TEST_CASE("X-ENG1: git's version is read from its --version line, vendor tails included") {
    using child::GitVersion;
    CHECK(child::parse_git_version("git version 2.39.5\n") == GitVersion{2, 39, 5});
    CHECK(child::parse_git_version("git version 2.32.0.windows.1\n") == GitVersion{2, 32, 0});
    CHECK(child::parse_git_version("git version 2.39.3 (Apple Git-145)\n") == GitVersion{2, 39, 3});
    CHECK(child::parse_git_version("git version 2.45\n") == GitVersion{2, 45, 0});
    CHECK_FALSE(child::parse_git_version("hub version 2.14.2\n").has_value());
    CHECK_FALSE(child::parse_git_version("git version x\n").has_value());
    CHECK(GitVersion{2, 31, 9} < child::kMinGitVersion);
    CHECK_FALSE(GitVersion{2, 32, 0} < child::kMinGitVersion);
  }
}

}  // namespace integration_pack_engine_auto
