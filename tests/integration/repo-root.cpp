// repo-root.cpp — the service's repository root rule (rule H1 for
// `serve --repo-root`): a repository under the root whose objects would be
// read from outside it (an alternate, a `.git` file, a worktree's
// commondir, a link in its object store) is refused at the API, before
// anything is submitted. Real repositories made by git; the API as a router
// (no socket, no executor).
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "fixture_server.hpp"
#include "api_router.hpp"
#include "service/api.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_repo_root {

using namespace courier;
using nlohmann::json;

namespace {

using Router = test::ApiRouter;
using test::body_of;

json submit(const std::string& repo, const std::string& oid) {
  return {{"repo", repo}, {"remote", "https://h/r.git"}, {"ref", "refs/heads/main"}, {"oid", oid}};
}

}  // namespace

TEST_SUITE("service") {
  TEST_CASE(
      "H1: serve --repo-root holds for every place objects are read from: an alternate (nested or relative), a .git "
      "file, a commondir or a link in the object store outside the root is refused 403 before anything runs") {
    Router r;
    test::TempDir elsewhere;
    const std::string outside = elsewhere.path() + "/outside";
    const std::string tip = test::make_source_repo(outside, 1);
    const std::string root = std::filesystem::canonical(r.root.path()).string();
    auto repo_under_root = [&](const std::string& name) {
      test::make_source_repo(root + "/" + name, 1);
      return root + "/" + name;
    };
    auto alternates = [](const std::string& repo, const std::string& text) {
      test::write_file(repo + "/.git/objects/info/alternates", text);
    };
    // The attacks: each makes the outside repository's objects readable.
    alternates(repo_under_root("alternate"), outside + "/.git/objects\n");
    alternates(repo_under_root("middle"), outside + "/.git/objects\n");
    alternates(repo_under_root("nested"), "# the middle one\n" + root + "/middle/.git/objects\n");
    alternates(repo_under_root("relative"),
               "../../../" + std::filesystem::relative(outside, root).string() + "/.git/objects\n");
    std::filesystem::create_directories(root + "/gitfile");
    test::write_file(root + "/gitfile/.git", "gitdir: " + outside + "/.git\n");
    std::filesystem::create_directories(root + "/worktree-git");
    test::write_file(root + "/worktree-git/commondir", outside + "/.git\n");
    std::filesystem::create_directories(root + "/worktree");
    test::write_file(root + "/worktree/.git", "gitdir: ../worktree-git\n");
    std::filesystem::create_directory_symlink(outside + "/.git/objects/" + tip.substr(0, 2),
                                              repo_under_root("linked") + "/.git/objects/zz");
    for (const char* name : {"alternate", "nested", "relative", "gitfile", "worktree", "linked"}) {
      const std::string repo = root + "/" + name;
      CAPTURE(repo);
      auto resp = r.post(submit(repo, tip));
      CHECK(resp.status == 403);
      CHECK(body_of(resp)["error"]["code"] == "repo_outside_root");
      CHECK(body_of(resp)["error"]["field"] == "repo");
    }
    // Inside the root the same shapes are a repository like any other.
    const std::string shared = root + "/shared";
    const std::string shared_tip = test::make_source_repo(shared, 2);
    alternates(repo_under_root("borrower"), shared + "/.git/objects\n");
    std::filesystem::create_directories(root + "/pointer");
    test::write_file(root + "/pointer/.git", "gitdir: ../shared/.git\n");
    for (const char* name : {"borrower", "pointer"}) {
      const std::string repo = root + "/" + name;
      CAPTURE(repo);
      auto resp = r.post(submit(repo, shared_tip));
      CHECK(resp.status != 403);
      CHECK(body_of(resp)["error"]["code"] != "repo_outside_root");
    }
  }
}

}  // namespace integration_repo_root
