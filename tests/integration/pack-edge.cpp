// pack-edge.cpp — a remote with many refs: the pack engines are handed
// the push's edge (the hidden parents of what is sent), never the remote's
// whole advertisement, and the pack still leaves out everything the remote
// has. Timing-free: what the engines receive is counted, and the packs'
// objects are counted against what git says the remote lacks.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "child/pack.hpp"
#include "fixture_server.hpp"
#include "support.hpp"
#include "sys/clock.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_pack_edge {

using namespace courier;

namespace {

// A repository of `commits` commits on main, and a branch `side` forked
// from main~(commits/2) with two commits of its own.
struct EdgeRepo {
  test::TempDir dir;
  std::string path;
  std::string tip;

  explicit EdgeRepo(int commits) {
    path = dir.path() + "/source";
    tip = test::make_source_repo(path, commits);
    test::git_ok({"checkout", "-q", "-b", "side", "main~" + std::to_string(commits / 2)}, path);
    for (int i = 1; i <= 2; ++i) {
      test::write_file(path + "/side.txt", "side " + std::to_string(i) + "\n");
      test::git_ok({"add", "side.txt"}, path);
      test::git_ok({"commit", "-q", "-m", "side " + std::to_string(i)}, path);
    }
    test::git_ok({"checkout", "-q", "main"}, path);
  }

  std::string rev(const std::string& spec) const { return test::git_ok({"rev-parse", spec}, path); }

  std::vector<std::string> lines(const std::vector<std::string>& args) const {
    std::vector<std::string> out;
    std::istringstream in(test::git_ok(args, path));
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
};

// A remote with many refs, as the child sees it: every id of `tips` named
// `repeats` times (refs/pull/N/head of a busy host), then `unknown` ids this
// repository never fetched.
std::vector<std::string> advertisement(const std::vector<std::string>& tips, int repeats, int unknown) {
  std::vector<std::string> ids;
  for (int r = 0; r < repeats; ++r) ids.insert(ids.end(), tips.begin(), tips.end());
  std::mt19937_64 rng(7);
  static const char* kHex = "0123456789abcdef";
  for (int i = 0; i < unknown; ++i) {
    std::string id(40, '0');
    for (auto& c : id) c = kHex[rng() % 16];
    ids.push_back(id);
  }
  return ids;
}

child::PackSpec spec_for(const EdgeRepo& repo, std::vector<std::string> hide) {
  child::PackSpec spec;
  spec.repo = repo.path;
  spec.oids = {repo.tip};
  spec.hide = std::move(hide);
  spec.deadline = sys::mono_now_ns() + 60'000 * sys::kNsPerMs;
  spec.sink = [](const void*, std::size_t) -> Result<void> { return {}; };
  return spec;
}

// What the remote lacks, by git: objects reachable from main and from none
// of `has`.
std::size_t objects_missing(const EdgeRepo& repo, const std::vector<std::string>& has) {
  std::vector<std::string> args = {"rev-list", "--objects", repo.tip, "--not"};
  args.insert(args.end(), has.begin(), has.end());
  return repo.lines(args).size();
}

}  // namespace

TEST_SUITE("pack-engine") {
  TEST_CASE(
      "X-ENG2: 60,000 advertised ids, repeats and ids unknown here, reach git pack-objects as one ^edge "
      "line") {
    child::init_libgit2();
    EdgeRepo repo(12);
    // Every commit of main~1's history, 2,000 times over, and 38,000 more.
    const std::vector<std::string> tips = repo.lines({"rev-list", "main~1"});
    auto spec = spec_for(repo, advertisement(tips, 2'000, 38'000));
    REQUIRE(spec.hide.size() == 60'000);
    auto plan = child::plan_git_pack(spec);
    REQUIRE_MESSAGE(plan.has_value(), plan.error().message);
    const std::string want = repo.tip + "\n^" + repo.rev("main~1") + "\n";
    MESSAGE("revision lines handed to git: " << std::count(plan->revs.begin(), plan->revs.end(), '\n'));
    CHECK(plan->revs == want);
  }

  TEST_CASE(
      "X-ENG2: libgit2's packbuilder walks from one hidden commit, and its pack holds only what the "
      "remote lacks") {
    child::init_libgit2();
    EdgeRepo repo(12);
    const std::vector<std::string> tips = repo.lines({"rev-list", "main~1"});
    auto spec = spec_for(repo, advertisement(tips, 2'000, 38'000));
    auto pack = child::build_pack(spec);
    REQUIRE_MESSAGE(pack.has_value(), pack.error().message);
    CHECK(pack->hidden == 1);
    CHECK(pack->objects == objects_missing(repo, {repo.rev("main~1")}));
    CHECK(pack->objects == 3);  // one commit, its tree, its blob
  }

  TEST_CASE(
      "X-ENG2: a remote tip this repository has is left out with its history, by both engines, "
      "whether or not it is an ancestor of the push") {
    child::init_libgit2();
    EdgeRepo repo(12);
    const std::string git = test::find_on_path("git");
    // The remote's ref is on `side` (a forced push replaces it): main's
    // commits up to the fork are the remote's already.
    const std::vector<std::string> has = {repo.rev("side")};
    const std::size_t missing = objects_missing(repo, has);
    REQUIRE(missing == 6 * 3);  // six commits past the fork, each with its tree and blob
    auto spec = spec_for(repo, advertisement(has, 1'000, 10'000));
    auto by_libgit2 = child::build_pack(spec);
    REQUIRE_MESSAGE(by_libgit2.has_value(), by_libgit2.error().message);
    CHECK(by_libgit2->objects == missing);
    test::TempDir home;
    auto by_git = child::build_pack_with_git(spec, git, home.path());
    REQUIRE_MESSAGE(by_git.has_value(), by_git.error().message);
    CHECK(by_git->objects == missing);

    // A tip that is the pushed commit itself: the remote has everything.
    auto all = spec_for(repo, advertisement({repo.tip}, 1'000, 10'000));
    auto none = child::build_pack(all);
    REQUIRE_MESSAGE(none.has_value(), none.error().message);
    CHECK(none->objects == 0);
    auto none_git = child::build_pack_with_git(all, git, home.path());
    REQUIRE_MESSAGE(none_git.has_value(), none_git.error().message);
    CHECK(none_git->objects == 0);
  }
}

}  // namespace integration_pack_edge
