// cli-sets.cpp — `git courier push` of several refs, deletions and push
// options (rules X-CLI6, X-CLI7), against nginx + git http-backend over
// TLS: each command line is run by the shipped binary from one clone and
// the command git needs for the same push (`git push --atomic` where this
// command is atomic by default) from an identical clone, each clone's origin
// a bare repository of its own on the same server, with the same hooks and
// configuration; the exit codes, the remote's refs afterwards and git's
// per-ref summary lines must agree.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/args.hpp"
#include "fixture_server.hpp"
#include "nginx_server.hpp"
#include "twins.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli_sets {

using namespace courier;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// git's per-ref summary lines (" * [new branch] ...", " ! [rejected] ...").
std::vector<std::string> summary_lines(const std::string& err) {
  std::vector<std::string> out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > 3 && line[0] == ' ' && std::string("*-+=! ").find(line[1]) != std::string::npos &&
        line[2] == ' ' && (contains(line, " -> ") || contains(line, "[deleted]"))) {
      out.push_back(line);
    }
  }
  return out;
}

using test::Twins;

// Both pushes as Twins::compare judges them, and every per-ref line git
// printed printed by git-courier too.
std::pair<test::RunResult, test::GitResult> same_lines(const Twins& t, const std::vector<std::string>& ours_args,
                                                       const std::vector<std::string>& git_args) {
  auto both = t.compare(ours_args, git_args);
  for (const auto& line : summary_lines(both.second.err)) CHECK_MESSAGE(contains(both.first.err, line), line);
  return both;
}

// A source repository with main (3 commits), a branch topic one behind and
// an annotated tag v1 at main.
std::string make_base(const test::TempDir& base_dir) {
  const std::string base = base_dir.path() + "/base";
  test::make_source_repo(base, 3);
  test::git_ok({"branch", "topic", "HEAD~1"}, base);
  test::git_ok({"branch", "other", "HEAD~2"}, base);
  test::git_ok({"-c", "user.name=Seller", "-c", "user.email=seller@example.com", "tag", "-a", "v1", "-m", "release 1"},
               base);
  return base;
}

bool has_ref(const std::string& repo, const std::string& ref) {
  return test::git({"rev-parse", "--verify", "--quiet", ref}, repo).ok();
}

}  // namespace

TEST_SUITE("cli-sets") {
  TEST_CASE("X-CLI6 X-CLI7: a branch and an annotated tag in one push land together, told as git's summary") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir base_dir;
    Twins t(nginx, make_base(base_dir), "pair");
    auto [c, g] = same_lines(t, {"origin", "main", "v1"}, {"--atomic", "origin", "main", "v1"});
    CHECK(c.exit_code == cli::kExitOk);
    CHECK(contains(c.err, " * [new branch]      main -> main"));
    CHECK(contains(c.err, " * [new tag]         v1 -> v1"));
    const std::string remote = t.nginx.repo_path(t.ours_remote);
    CHECK(test::git_ok({"--git-dir", remote, "cat-file", "-t", "refs/tags/v1"}) == "tag");
    CHECK(test::git_ok({"--git-dir", remote, "rev-parse", "refs/tags/v1"}) ==
          test::git_ok({"rev-parse", "refs/tags/v1"}, t.ours));
    // X-CLI7: origin/main follows, as git's.
    CHECK(test::git_ok({"rev-parse", "refs/remotes/origin/main"}, t.ours) ==
          test::git_ok({"rev-parse", "main"}, t.ours));
  }

  TEST_CASE(
      "X-CLI6 X-CLI7: an update hook refusing the tag: atomic moves neither ref, --no-atomic moves the branch, "
      "each exits 1 as git") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir base_dir;
    Twins t(nginx, make_base(base_dir), "hooked");
    t.hook("update", "case \"$1\" in refs/tags/*) echo \"tags are frozen\" >&2; exit 1;; esac\nexit 0\n");
    auto [ac, ag] = same_lines(t, {"origin", "main", "v1"}, {"--atomic", "origin", "main", "v1"});
    CHECK(ac.exit_code == cli::kExitRejected);
    CHECK(ag.exit_code == 1);
    CHECK(t.refs_of(t.ours_remote).empty());
    CHECK(contains(ac.err, "! [remote rejected] v1 -> v1"));
    CHECK(contains(ac.err, "error: failed to push some refs to"));
    CHECK_FALSE(has_ref(t.ours, "refs/remotes/origin/main"));
    // Non-atomic: the branch lands, the tag is refused; exit 1, as git.
    auto [nc, ng] = same_lines(t, {"--no-atomic", "origin", "main", "v1"}, {"origin", "main", "v1"});
    CHECK(nc.exit_code == cli::kExitRejected);
    CHECK(ng.exit_code == 1);
    CHECK(contains(t.refs_of(t.ours_remote), " refs/heads/main"));
    CHECK_FALSE(contains(t.refs_of(t.ours_remote), " refs/tags/v1"));
    CHECK(contains(nc.err, " * [new branch]      main -> main"));
    CHECK(contains(nc.err, " ! [remote rejected] v1 -> v1 (hook declined)"));
    CHECK_MESSAGE(contains(nc.err, "partly applied"), nc.err);
    // X-CLI7: the ref that landed moves its tracking ref.
    CHECK(has_ref(t.ours, "refs/remotes/origin/main"));
  }

  TEST_CASE("X-CLI7: a partly applied non-atomic push is rejected, exit 1, and --json says remote_effect mixed") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir base_dir;
    Twins t(nginx, make_base(base_dir), "mixed");
    t.hook("update", "case \"$1\" in refs/tags/*) echo \"tags are frozen\" >&2; exit 1;; esac\nexit 0\n");
    auto again = t.courier({"--no-atomic", "--json", "origin", "main", "v1"});
    CHECK(again.exit_code == cli::kExitRejected);
    CHECK(contains(t.refs_of(t.ours_remote), " refs/heads/main"));
    CHECK_MESSAGE(contains(again.out, "\"remote_effect\":\"mixed\""), again.out);
    CHECK_MESSAGE(contains(again.out, "\"refs\":["), again.out);
  }

  TEST_CASE(
      "X-CLI6 X-CLI7: :ref and --delete delete remote refs as git does; a ref the remote lacks is refused as git") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir base_dir;
    Twins t(nginx, make_base(base_dir), "deletes");
    for (const auto& clone : {t.ours, t.theirs}) test::git_ok({"push", "origin", "main", "topic", "other"}, clone);
    REQUIRE(has_ref(t.ours, "refs/remotes/origin/topic"));
    auto [c, g] = same_lines(t, {"origin", ":topic"}, {"origin", ":topic"});
    CHECK(c.exit_code == cli::kExitOk);
    CHECK(contains(c.err, " - [deleted]         topic"));
    CHECK_FALSE(contains(t.refs_of(t.ours_remote), " refs/heads/topic"));
    CHECK_FALSE(has_ref(t.ours, "refs/remotes/origin/topic"));
    auto [dc, dg] = same_lines(t, {"--delete", "origin", "other"}, {"--delete", "origin", "other"});
    CHECK(dc.exit_code == cli::kExitOk);
    CHECK_FALSE(contains(t.refs_of(t.ours_remote), " refs/heads/other"));
    // A ref the remote does not have: git says "unable to delete 'nosuch':
    // remote ref does not exist" and exits 1; so does this command, and
    // nothing moves.
    auto [nc, ng] = same_lines(t, {"origin", ":nosuch"}, {"origin", ":nosuch"});
    CHECK(nc.exit_code == cli::kExitRejected);
    CHECK(ng.exit_code == 1);
    CHECK(contains(ng.err, "remote ref does not exist"));
    CHECK_MESSAGE(contains(nc.err, " ! [rejected]        nosuch (remote ref does not exist)"), nc.err);
    // Given in full, git sends the deletion (receive-pack only warns); this
    // command refuses it before anything is sent, as for a short name
    // (docs/operations.md).
    auto full = t.courier({"origin", ":refs/heads/nosuch"});
    CHECK(full.exit_code == cli::kExitRejected);
    CHECK(contains(full.err, "remote ref does not exist"));
    CHECK(contains(t.refs_of(t.ours_remote), " refs/heads/main"));
  }

  TEST_CASE(
      "X-CLI6: a push option reaches the server's hook; a server without push-options is refused before anything "
      "is sent") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir base_dir;
    const std::string base = make_base(base_dir);
    Twins t(nginx, base, "options");
    t.remotes_config("receive.advertisePushOptions", "true");
    t.hook("pre-receive",
           "cat >/dev/null\nprintf '%s|%s|%s' \"$GIT_PUSH_OPTION_COUNT\" \"$GIT_PUSH_OPTION_0\" "
           "\"$GIT_PUSH_OPTION_1\" > \"$GIT_DIR/options-seen\"\n");
    // One ref: told in one line, not git's summary (X-OUT1).
    auto [c, g] = t.same({"-o", "ci.skip", "--push-option=note=two words", "origin", "main"});
    CHECK(c.exit_code == cli::kExitOk);
    const std::string seen = read_file(t.nginx.repo_path(t.ours_remote) + "/options-seen");
    CHECK(seen == "2|ci.skip|note=two words");
    CHECK(seen == read_file(t.nginx.repo_path(t.theirs_remote) + "/options-seen"));
    // git's push.pushOption, when no -o is given.
    test::git_ok({"config", "push.pushOption", "from.config"}, t.ours);
    test::git_ok({"commit", "--allow-empty", "-q", "-m", "more"}, t.ours);
    auto configured = t.courier({"origin", "main"});
    CHECK_MESSAGE(configured.exit_code == cli::kExitOk, configured.err);
    CHECK(read_file(t.nginx.repo_path(t.ours_remote) + "/options-seen") == "1|from.config|");
    // A server that does not advertise push-options: refused before anything
    // is sent, as git refuses it.
    Twins plain(nginx, base, "no-options");
    auto [pc, pg] = plain.same({"-o", "ci.skip", "origin", "main"});
    CHECK(pc.exit_code != cli::kExitOk);
    CHECK(pc.exit_code != cli::kExitUsage);
    CHECK(contains(pc.err, "push-options"));
    CHECK(plain.refs_of(plain.ours_remote).empty());
  }

  TEST_CASE(
      "X-CLI6: a server with receive.advertiseAtomic=false is refused before anything is sent unless "
      "--no-atomic") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir base_dir;
    Twins t(nginx, make_base(base_dir), "no-atomic");
    t.remotes_config("receive.advertiseAtomic", "false");
    auto [c, g] = same_lines(t, {"origin", "main", "v1"}, {"--atomic", "origin", "main", "v1"});
    CHECK(c.exit_code != cli::kExitOk);
    CHECK(contains(c.err, "atomic"));
    CHECK(contains(c.err, "--no-atomic"));
    CHECK(t.refs_of(t.ours_remote).empty());
    auto [nc, ng] = same_lines(t, {"--no-atomic", "origin", "main", "v1"}, {"origin", "main", "v1"});
    CHECK(nc.exit_code == cli::kExitOk);
    CHECK(contains(t.refs_of(t.ours_remote), " refs/tags/v1"));
  }

  TEST_CASE(
      "X-CLI6: a ref twice, a delete and an update of one ref, and a bad push option are refused before anything "
      "is sent") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    test::TempDir base_dir;
    Twins t(nginx, make_base(base_dir), "refusals");
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"origin", "main", "topic:main"}, "is a destination twice"},
        {{"origin", "main", ":main"}, "is both deleted and updated"},
        {{"-o", "two\nlines", "origin", "main"}, "contains a newline"},
        {{"--expect-old", std::string(40, '0'), "origin", "main", "topic"}, "--force-with-lease=REF:EXPECT"},
    };
    for (const auto& [args, why] : cases) {
      auto r = t.courier(args);
      CHECK_MESSAGE(r.exit_code == cli::kExitUsage, r.err);
      CHECK_MESSAGE(contains(r.err, why), r.err);
    }
    auto json = t.courier({"--json", "origin", "main", "topic:main"});
    CHECK(contains(json.out, "\"field\":\"updates[1].ref\""));
    CHECK(t.refs_of(t.ours_remote).empty());
  }
}

}  // namespace integration_cli_sets
