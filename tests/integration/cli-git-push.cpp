// cli-git-push.cpp — `git courier push [<remote> [<refspec>]]` typed as
// `git push` is (rules X-CLI1, X-CLI2), against nginx + git http-backend
// over TLS: each command line is run twice, by the shipped binary from one
// clone and by `git push` from an identical clone of the same repository,
// each clone's origin a bare repository of its own on the same server; the
// outcome (pushed or refused) and the remote's refs afterwards must be the
// same. The forms git accepts but one delivery cannot honour (wildcards,
// --all, --mirror) are expected to differ: git pushes,
// this command refuses and says what git would have done.
#include <doctest/doctest.h>

#include <filesystem>

#include "cli/args.hpp"
#include "fixture_server.hpp"
#include "nginx_server.hpp"
#include "twins.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli_git_push {

using namespace courier;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

using test::Twins;

}  // namespace

TEST_SUITE("cli-git-push") {
  TEST_CASE("X-CLI2: `git courier push` with no arguments pushes the current branch to its upstream, as git push") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir base_dir;
    const std::string base = base_dir.path() + "/base";
    test::make_source_repo(base, 3);
    Twins t(nginx, base, "noargs");
    // No upstream yet: both refuse, in git's words, and nothing is pushed.
    auto [bare_c, bare_g] = t.same({});
    CHECK(bare_c.exit_code == cli::kExitUsage);
    CHECK(contains(bare_c.err, "has no upstream branch"));
    CHECK(contains(bare_g.err, "has no upstream branch"));
    t.both({"config", "branch.main.remote", "origin"});
    t.both({"config", "branch.main.merge", "refs/heads/main"});
    auto [c, g] = t.same({});
    CHECK(c.exit_code == cli::kExitOk);
    CHECK(contains(t.refs_of(t.ours_remote), " refs/heads/main"));
    // simple: an upstream of another name is refused by both.
    t.both({"config", "branch.main.merge", "refs/heads/trunk"});
    auto [mc, mg] = t.same({});
    CHECK(contains(mc.err, "does not match\nthe name of your current branch"));
    CHECK(contains(mg.err, "does not match"));
    // push.default upstream pushes to it; remote.pushDefault names the remote.
    t.both({"config", "push.default", "upstream"});
    t.both({"config", "remote.pushDefault", "origin"});
    auto [uc, ug] = t.same({});
    CHECK(uc.exit_code == cli::kExitOk);
    CHECK(contains(t.refs_of(t.ours_remote), " refs/heads/trunk"));
  }

  TEST_CASE(
      "X-CLI1: `push origin main` from a subdirectory, with -C and with GIT_DIR finds the repository as git does") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir base_dir;
    const std::string base = base_dir.path() + "/base";
    test::make_source_repo(base, 3);
    Twins t(nginx, base, "subdir");
    t.both({"reset", "-q", "--hard", "HEAD~1"});
    auto [c, g] = t.same({"origin", "main"}, "/sub/dir");
    CHECK(c.exit_code == cli::kExitOk);
    t.both({"reset", "-q", "--hard", "ORIG_HEAD"});
    // -C before the command, as git takes it; here from the clone's parent.
    std::vector<std::string> argv = {COURIER_BINARY,          "-C",           t.ours + "/sub", "push", "--lane-dir",
                                     t.dir.path() + "/lanes", "--no-journal", "origin",        "main"};
    auto with_c = test::run(argv, {}, test::Stdin::bytes, test::git_env());
    CHECK_MESSAGE(with_c.exit_code == cli::kExitOk, with_c.err);
    auto git_c = test::git({"-C", t.theirs + "/sub", "push", "origin", "main"});
    CHECK_MESSAGE(git_c.ok(), git_c.err);
    CHECK(t.refs_of(t.ours_remote) == t.refs_of(t.theirs_remote));
    // GIT_DIR names the repository wherever the command starts, for both.
    auto by_env = test::run({COURIER_BINARY, "-C", t.dir.path(), "push", "--lane-dir", t.dir.path() + "/lanes",
                             "--no-journal", "origin", "HEAD:refs/heads/by-env"},
                            {}, test::Stdin::bytes, test::git_env({"GIT_DIR=" + t.ours + "/.git"}));
    CHECK_MESSAGE(by_env.exit_code == cli::kExitOk, by_env.err);
    auto git_env = test::git({"-C", t.dir.path(), "push", "origin", "HEAD:refs/heads/by-env"}, "",
                             {"GIT_DIR=" + t.theirs + "/.git"});
    CHECK_MESSAGE(git_env.ok(), git_env.err);
    CHECK(t.refs_of(t.ours_remote) == t.refs_of(t.theirs_remote));
    // Outside any repository: git's words.
    auto outside = test::run({COURIER_BINARY, "-C", t.dir.path(), "push", "origin", "main"}, {}, test::Stdin::bytes,
                             test::git_env({"GIT_CEILING_DIRECTORIES=" + t.dir.path()}));
    CHECK(outside.exit_code == cli::kExitUsage);
    CHECK_MESSAGE(contains(outside.err, "not a git repository"), outside.err);
  }

  TEST_CASE("X-CLI1: HEAD:refs/heads/x, a short destination, and +main as a force move the remote as git push does") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir base_dir;
    const std::string base = base_dir.path() + "/base";
    test::make_source_repo(base, 4);
    test::git_ok({"tag", "v1", "HEAD~3"}, base);
    Twins t(nginx, base, "forms");
    t.same({"origin", "HEAD:refs/heads/x"});
    t.same({"origin", "HEAD~2:refs/heads/main"});
    t.same({"origin", "main:short"});
    t.same({"origin", "v1"});
    // The long options resolve a short --ref as git resolves a short <dst>.
    auto long_form = t.courier({"--remote", "origin", "--rev", "main", "--ref", "long"});
    CHECK_MESSAGE(long_form.exit_code == cli::kExitOk, long_form.err);
    t.git_push({"origin", "main:long"});
    CHECK(t.refs_of(t.ours_remote) == t.refs_of(t.theirs_remote));
    // A source that is not a ref needs a full destination: both refuse.
    auto [ec, eg] = t.same({"origin", "main~1:other"});
    CHECK(contains(ec.err, "not a full refname"));
    CHECK(contains(eg.err, "not a full refname"));
    // Backwards: refused without '+', moved with it.
    t.both({"reset", "-q", "--hard", "HEAD~3"});
    auto [nc, ng] = t.same({"origin", "main"});
    CHECK(nc.exit_code == cli::kExitRejected);
    CHECK(contains(ng.err, "non-fast-forward"));
    auto [fc, fg] = t.same({"origin", "+main"});
    CHECK(fc.exit_code == cli::kExitOk);
    CHECK(contains(t.refs_of(t.ours_remote), test::git_ok({"rev-parse", "HEAD"}, t.ours) + " refs/heads/main"));
  }

  TEST_CASE("X-CLI1: what git accepts but one delivery cannot honour is refused, saying what git would do") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir base_dir;
    const std::string base = base_dir.path() + "/base";
    test::make_source_repo(base, 2);
    test::git_ok({"branch", "topic", "HEAD~1"}, base);
    Twins t(nginx, base, "refused");
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"origin", "refs/heads/*:refs/heads/*"}, "git would push every ref it matches"},
        {{"--all", "origin"}, "git would push every branch"},
        {{"--mirror", "origin"}, "git would push every ref"},
        {{"origin", "^topic"}, "negative refspec"},
    };
    for (const auto& [args, why] : cases) {
      auto r = t.courier(args);
      CHECK_MESSAGE(r.exit_code == cli::kExitUsage, r.err);
      CHECK_MESSAGE(contains(r.err, why), r.err);
      CHECK(t.refs_of(t.ours_remote).empty());
    }
    // Where it differs from git: git pushes both branches.
    auto all = t.git_push({"--all", "origin"});
    CHECK_MESSAGE(all.ok(), all.err);
    CHECK(contains(t.refs_of(t.theirs_remote), " refs/heads/topic"));
    // Malformed: git's words, and neither pushes.
    auto empty_dst = t.courier({"origin", "main:"});
    CHECK(contains(empty_dst.err, "invalid refspec 'main:'"));
    CHECK(contains(t.git_push({"origin", "main:"}).err, "invalid refspec 'main:'"));
    CHECK(t.refs_of(t.ours_remote).empty());
  }
}

}  // namespace integration_cli_git_push
