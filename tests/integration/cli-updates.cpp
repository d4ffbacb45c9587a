// cli-updates.cpp — how the shipped CLI moves a remote ref, against
// nginx + git http-backend over TLS, side by side with `git push` on the
// same server and repositories: fast-forward by default ("non-fast-forward",
// "fetch first", "already exists" refused before the POST), --force,
// --force-with-lease and --expect-old (a compare-and-swap), and --remote
// naming a configured remote (pushurl before url, unknown names, several
// push URLs).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "fixture_server.hpp"
#include "nginx_server.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli_updates {

using namespace courier;
using nlohmann::json;

namespace {

// A source repository, a lane directory and a home with no configuration:
// the CLI reads git's configuration, and nothing of this machine's may
// leak into the test.
struct Updates {
  test::NginxServer& nginx;
  test::TempDir dir;
  std::string source;
  std::string lanes;
  std::string home;

  explicit Updates(test::NginxServer& n, int commits = 4) : nginx(n) {
    source = dir.path() + "/source";
    test::make_source_repo(source, commits);
    lanes = dir.path() + "/lanes";
    home = dir.path() + "/home";
    std::filesystem::create_directories(home);
  }

  std::vector<std::string> env() const {
    std::vector<std::string> e = {"PATH=/usr/bin:/bin", "LANG=C", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
                                  "GIT_CONFIG_GLOBAL=/dev/null"};
    if (const char* tmp = std::getenv("TMPDIR")) e.push_back(std::string("TMPDIR=") + tmp);
    return e;
  }

  // `git-courier push` of REV to refs/heads/main (or `ref`) of `remote`, with --json.
  test::RunResult push(const std::string& remote, const std::string& rev, std::vector<std::string> extra = {},
                       const std::string& ref = "refs/heads/main") const {
    std::vector<std::string> a = {COURIER_BINARY, "push", "--repo",       source,  "--remote",  remote,
                                  "--ref",        ref,    "--rev",        rev,     "--ca-file", nginx.ca_file(),
                                  "--lane-dir",   lanes,  "--no-journal", "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return test::run(a, {}, test::Stdin::bytes, env());
  }

  // `git push` from the source repository, trusting the server's CA.
  test::GitResult git_push(const std::vector<std::string>& args) const {
    std::vector<std::string> a = {"push"};
    a.insert(a.end(), args.begin(), args.end());
    return test::git(a, source, {"GIT_SSL_CAINFO=" + nginx.ca_file()});
  }

  std::string rev(const std::string& spec) const { return test::git_ok({"rev-parse", spec}, source); }

  // The remote's ref, read back with git ("" when absent).
  std::string remote_ref(const std::string& repo_name, const std::string& ref = "refs/heads/main") const {
    auto r = test::git({"--git-dir", nginx.repo_path(repo_name), "rev-parse", "--verify", "-q", ref});
    return r.ok() ? r.out.substr(0, 40) : std::string();
  }
};

json parse_json(const test::RunResult& r) {
  json j = json::parse(r.out, nullptr, false);
  REQUIRE_MESSAGE(!j.is_discarded(), "stdout is not one JSON object: " << r.out << "\nstderr: " << r.err);
  return j;
}

std::string reason_of(const json& j) { return j["reason"].is_string() ? j["reason"].get<std::string>() : ""; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("cli-updates") {
  TEST_CASE(
      "T4: a push that is not a fast-forward is refused before the POST with git's word, and moved with --force") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Updates u(nginx);
    nginx.create_bare_repo("ff");
    const std::string remote = nginx.url("ff");
    const std::string tip = u.rev("HEAD");
    const std::string back = u.rev("HEAD~2");

    // A new ref, then a fast-forward: both as git makes them.
    auto created = u.push(remote, "HEAD~3");
    CHECK_MESSAGE(created.exit_code == cli::kExitOk, created.err);
    auto forward = u.push(remote, "HEAD");
    CHECK_MESSAGE(forward.exit_code == cli::kExitOk, forward.err);
    CHECK(u.remote_ref("ff") == tip);

    // Backwards: refused here, before anything is sent.
    auto rewind = u.push(remote, "HEAD~2");
    CHECK_MESSAGE(rewind.exit_code == cli::kExitRejected,
                  (std::string("a non-fast-forward push was not refused: ") + rewind.err));
    json j = parse_json(rewind);
    CHECK(j["outcome"] == "rejected");
    CHECK_MESSAGE(contains(reason_of(j), "non-fast-forward"), reason_of(j));
    CHECK(j["remote_effect"] == "none");
    CHECK(j["old_oid"] == tip);
    CHECK(j["bytes_sent"] == 0);
    // Said as a refusal here, never as the remote's: nothing reached it.
    CHECK_MESSAGE(contains(rewind.err, "rejected (nothing sent)"), rewind.err);
    CHECK_MESSAGE(u.remote_ref("ff") == tip, "the remote's ref moved on a refused push");

    // git refuses the same push, in the same word.
    auto git_rewind = u.git_push({remote, "HEAD~2:refs/heads/main"});
    CHECK_FALSE(git_rewind.ok());
    CHECK_MESSAGE(contains(git_rewind.err, "non-fast-forward"), git_rewind.err);
    CHECK(u.remote_ref("ff") == tip);

    // --force (and -f) moves it, as git's does.
    auto forced = u.push(remote, "HEAD~2", {"--force"});
    CHECK_MESSAGE(forced.exit_code == cli::kExitOk, forced.err);
    CHECK(parse_json(forced)["outcome"] == "delivered");
    CHECK(u.remote_ref("ff") == back);
    auto git_forward = u.git_push({remote, "HEAD:refs/heads/main"});
    CHECK_MESSAGE(git_forward.ok(), git_forward.err);
    auto short_forced = u.push(remote, "HEAD~1", {"-f"});
    CHECK_MESSAGE(short_forced.exit_code == cli::kExitOk, short_forced.err);
    CHECK(u.remote_ref("ff") == u.rev("HEAD~1"));
  }

  TEST_CASE("T4: fetch first: a remote ref at a commit this repository lacks is refused, as git refuses it") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Updates u(nginx);
    nginx.create_bare_repo("ahead");
    // Someone else's history on the remote, unknown here.
    test::TempDir other_dir;
    const std::string other = other_dir.path() + "/other";
    test::make_source_repo(other, 1);
    test::git_ok({"commit", "-q", "--allow-empty", "-m", "elsewhere"}, other);
    const std::string theirs = test::git_ok({"rev-parse", "HEAD"}, other);
    test::git_ok({"push", "-q", nginx.url("ahead"), "HEAD:refs/heads/main"}, other,
                 {"GIT_SSL_CAINFO=" + nginx.ca_file()});
    REQUIRE(u.remote_ref("ahead") == theirs);

    auto r = u.push(nginx.url("ahead"), "HEAD");
    CHECK(r.exit_code == cli::kExitRejected);
    json j = parse_json(r);
    CHECK_MESSAGE(contains(reason_of(j), "fetch first"), reason_of(j));
    CHECK(contains(reason_of(j), theirs));
    CHECK(j["remote_effect"] == "none");
    CHECK(u.remote_ref("ahead") == theirs);
    auto git_r = u.git_push({nginx.url("ahead"), "HEAD:refs/heads/main"});
    CHECK_FALSE(git_r.ok());
    CHECK_MESSAGE(contains(git_r.err, "fetch first"), git_r.err);

    auto forced = u.push(nginx.url("ahead"), "HEAD", {"--force"});
    CHECK_MESSAGE(forced.exit_code == cli::kExitOk, forced.err);
    CHECK(u.remote_ref("ahead") == u.rev("HEAD"));
  }

  TEST_CASE("T4: an existing tag is not moved without --force (already exists), as git refuses it") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Updates u(nginx);
    nginx.create_bare_repo("tags");
    const std::string remote = nginx.url("tags");
    auto first = u.push(remote, "HEAD~1", {}, "refs/tags/v1");
    CHECK_MESSAGE(first.exit_code == cli::kExitOk, first.err);
    auto moved = u.push(remote, "HEAD", {}, "refs/tags/v1");  // a fast-forward, and still a tag
    CHECK(moved.exit_code == cli::kExitRejected);
    CHECK_MESSAGE(contains(reason_of(parse_json(moved)), "already exists"), moved.out);
    CHECK(u.remote_ref("tags", "refs/tags/v1") == u.rev("HEAD~1"));
    auto git_moved = u.git_push({remote, "HEAD:refs/tags/v1"});
    CHECK_FALSE(git_moved.ok());
    CHECK_MESSAGE(contains(git_moved.err, "already exists"), git_moved.err);
    auto forced = u.push(remote, "HEAD", {"--force"}, "refs/tags/v1");
    CHECK_MESSAGE(forced.exit_code == cli::kExitOk, forced.err);
    CHECK(u.remote_ref("tags", "refs/tags/v1") == u.rev("HEAD"));
  }

  TEST_CASE("T4: --force-with-lease=REF:EXPECT and --expect-old move the ref only when the remote is at the id") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Updates u(nginx);
    nginx.create_bare_repo("cas");
    const std::string remote = nginx.url("cas");
    REQUIRE(u.push(remote, "HEAD").exit_code == cli::kExitOk);
    const std::string tip = u.rev("HEAD");

    // A lease that does not hold: stale info, nothing sent; git agrees.
    auto stale = u.push(remote, "HEAD~2", {"--force-with-lease=main:HEAD~1"});
    CHECK(stale.exit_code == cli::kExitRejected);
    json s = parse_json(stale);
    CHECK_MESSAGE(contains(reason_of(s), "stale info"), reason_of(s));
    CHECK(s["remote_effect"] == "none");
    CHECK(u.remote_ref("cas") == tip);
    auto git_stale = u.git_push({"--force-with-lease=main:HEAD~1", remote, "HEAD~2:refs/heads/main"});
    CHECK_FALSE(git_stale.ok());
    CHECK_MESSAGE(contains(git_stale.err, "stale info"), git_stale.err);

    // A lease that holds: a non-fast-forward is allowed, as git's lease allows it.
    auto leased = u.push(remote, "HEAD~2", {"--force-with-lease=refs/heads/main:" + tip});
    CHECK_MESSAGE(leased.exit_code == cli::kExitOk, leased.err);
    CHECK(u.remote_ref("cas") == u.rev("HEAD~2"));

    // An empty EXPECT: the ref must not exist.
    auto absent = u.push(remote, "HEAD", {"--force-with-lease=main:"});
    CHECK(absent.exit_code == cli::kExitRejected);
    CHECK(contains(reason_of(parse_json(absent)), "stale info"));

    // --expect-old: the same compare-and-swap by id.
    auto wrong = u.push(remote, "HEAD~3", {"--expect-old", tip});
    CHECK(wrong.exit_code == cli::kExitRejected);
    CHECK(contains(reason_of(parse_json(wrong)), "stale info"));
    CHECK(u.remote_ref("cas") == u.rev("HEAD~2"));
    auto right = u.push(remote, "HEAD~3", {"--expect-old", u.rev("HEAD~2")});
    CHECK_MESSAGE(right.exit_code == cli::kExitOk, right.err);
    CHECK(u.remote_ref("cas") == u.rev("HEAD~3"));
    auto create = u.push(remote, "HEAD", {"--expect-old", std::string(40, '0')}, "refs/heads/fresh");
    CHECK_MESSAGE(create.exit_code == cli::kExitOk, create.err);
    CHECK(u.remote_ref("cas", "refs/heads/fresh") == tip);
  }

  TEST_CASE("--remote NAME pushes to remote.NAME.pushurl, else remote.NAME.url; a bare lease reads its tracking ref") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Updates u(nginx);
    nginx.create_bare_repo("byname");
    nginx.create_bare_repo("fetchonly");
    test::git_ok({"remote", "add", "origin", nginx.url("byname")}, u.source);
    auto named = u.push("origin", "HEAD");
    CHECK_MESSAGE(named.exit_code == cli::kExitOk, named.err);
    CHECK(parse_json(named)["remote"] == nginx.url("byname"));
    CHECK(u.remote_ref("byname") == u.rev("HEAD"));

    // A pushurl comes before the url, as in git.
    test::git_ok({"config", "remote.origin.url", nginx.url("fetchonly")}, u.source);
    test::git_ok({"config", "remote.origin.pushurl", nginx.url("byname")}, u.source);
    auto pushed = u.push("origin", "HEAD~1", {"--force"});
    CHECK_MESSAGE(pushed.exit_code == cli::kExitOk, pushed.err);
    CHECK(u.remote_ref("byname") == u.rev("HEAD~1"));
    CHECK(u.remote_ref("fetchonly").empty());

    // A bare --force-with-lease: the remote-tracking ref is the expected id.
    test::git_ok({"config", "remote.origin.url", nginx.url("byname")}, u.source);
    test::git_ok({"fetch", "-q", "origin"}, u.source, {"GIT_SSL_CAINFO=" + nginx.ca_file()});
    REQUIRE(u.rev("refs/remotes/origin/main") == u.rev("HEAD~1"));
    auto leased = u.push("origin", "HEAD~2", {"--force-with-lease"});
    CHECK_MESSAGE(leased.exit_code == cli::kExitOk, leased.err);
    CHECK(u.remote_ref("byname") == u.rev("HEAD~2"));
    // The push moved origin/main along, as git's does (X-TRACK1); put back
    // where it was, the tracking ref is stale: refused, as git refuses it.
    CHECK(u.rev("refs/remotes/origin/main") == u.rev("HEAD~2"));
    test::git_ok({"update-ref", "refs/remotes/origin/main", u.rev("HEAD~1")}, u.source);
    auto stale = u.push("origin", "HEAD~3", {"--force-with-lease=main"});
    CHECK(stale.exit_code == cli::kExitRejected);
    CHECK_MESSAGE(contains(reason_of(parse_json(stale)), "stale info"), stale.out);
    auto git_stale = u.git_push({"--force-with-lease", "origin", "HEAD~3:refs/heads/main"});
    CHECK_FALSE(git_stale.ok());
    CHECK_MESSAGE(contains(git_stale.err, "stale info"), git_stale.err);
    // No tracking ref at all: git expects the ref to be absent, and so does this.
    test::git_ok({"update-ref", "-d", "refs/remotes/origin/main"}, u.source);
    auto untracked = u.push("origin", "HEAD~3", {"--force-with-lease"});
    CHECK(untracked.exit_code == cli::kExitRejected);
    CHECK(contains(reason_of(parse_json(untracked)), "stale info"));
    auto git_untracked = u.git_push({"--force-with-lease", "origin", "HEAD~3:refs/heads/main"});
    CHECK_FALSE(git_untracked.ok());
    CHECK_MESSAGE(contains(git_untracked.err, "stale info"), git_untracked.err);
    CHECK(u.remote_ref("byname") == u.rev("HEAD~2"));

    // With a URL a bare lease has no tracking ref to read: a usage error.
    auto by_url = u.push(nginx.url("byname"), "HEAD~3", {"--force-with-lease"});
    CHECK(by_url.exit_code == cli::kExitUsage);
    CHECK_MESSAGE(contains(by_url.err, "--force-with-lease=refs/heads/main:EXPECT"), by_url.err);
  }

  TEST_CASE("--remote: an unknown name is refused in git's words, and so is a remote with several push URLs") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Updates u(nginx);
    nginx.create_bare_repo("one");
    auto unknown = u.push("nosuch", "HEAD");
    CHECK(unknown.exit_code == cli::kExitUsage);
    CHECK_MESSAGE(contains(unknown.err, "'nosuch' does not appear to be a git repository"), unknown.err);
    auto git_unknown = u.git_push({"nosuch", "HEAD:refs/heads/main"});
    CHECK_FALSE(git_unknown.ok());
    CHECK_MESSAGE(contains(git_unknown.err, "'nosuch' does not appear to be a git repository"), git_unknown.err);

    test::git_ok({"remote", "add", "both", nginx.url("one")}, u.source);
    test::git_ok({"config", "--add", "remote.both.pushurl", nginx.url("one")}, u.source);
    test::git_ok({"config", "--add", "remote.both.pushurl", nginx.url_base() + "/two.git"}, u.source);
    auto several = u.push("both", "HEAD");
    CHECK(several.exit_code == cli::kExitUsage);
    CHECK_MESSAGE(contains(several.err, "2 push URLs"), several.err);
    CHECK(contains(several.err, nginx.url_base() + "/two.git"));
    CHECK(u.remote_ref("one").empty());
  }

  TEST_CASE("push options: --force, --force-with-lease and --expect-old exclude each other; a lease for another ref") {
    using cli::parse_push_args;
    const std::vector<std::string> base = {"--repo",          "r",     "--remote", "https://h/r", "--ref",
                                           "refs/heads/main", "--rev", "HEAD"};
    auto with = [&](std::vector<std::string> extra) {
      auto a = base;
      a.insert(a.end(), extra.begin(), extra.end());
      return parse_push_args(a);
    };
    CHECK(with({"--force"})->force);
    CHECK(with({"-f"})->force);
    CHECK_FALSE(with({})->force);
    auto bare = with({"--force-with-lease"});
    REQUIRE(bare.has_value());
    CHECK_FALSE(bare->lease->ref.has_value());
    auto full = with({"--force-with-lease=main:abc"});
    REQUIRE(full.has_value());
    CHECK(*full->lease->ref == "main");
    CHECK(*full->lease->expect == "abc");
    auto empty_expect = with({"--force-with-lease=main:"});
    REQUIRE(empty_expect.has_value());
    CHECK(empty_expect->lease->expect->empty());
    CHECK(with({"--expect-old", std::string(40, 'a')})->expect_old == std::string(40, 'a'));
    for (const auto& bad : std::vector<std::vector<std::string>>{{"--force", "--force-with-lease"},
                                                                 {"-f", "--expect-old", std::string(40, 'a')},
                                                                 {"--force-with-lease", "--expect-old", "x"},
                                                                 {"--force-with-lease=a", "--force-with-lease=b"},
                                                                 {"--force-with-lease=:abc"},
                                                                 {"--force=yes"}}) {
      auto r = with(bad);
      CHECK_MESSAGE(!r.has_value(), bad.front());
    }
  }
}

}  // namespace integration_cli_updates
