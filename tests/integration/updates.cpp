// updates.cpp — how the library moves a remote ref
// (DeliveryRequest::update), through the Executor and the TLS fixture
// server, which counts every POST: fast-forward by default, refused before
// any POST; a compare-and-swap mode that needs its id; a re-delivery after
// `possible` that a forced first attempt can finish (J4). Also the pure
// parts the CLI builds on: --remote names read from git's configuration,
// URL rewriting, and the remote-tracking ref of a lease.
#include <doctest/doctest.h>

#include "cli/remote_name.hpp"
#include "push_setup.hpp"
#include "repo/remote_tracking.hpp"
#include "repo/update_rule.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_updates {

using namespace courier;

namespace {

struct Setup : test::PushSetup {
  std::string journal_path;
  explicit Setup(int commits = 4) : PushSetup(commits) { journal_path = dir.path() + "/state/journal.sqlite"; }
};

repo::GitConfig config_of(std::vector<repo::ConfigEntry> entries) { return repo::GitConfig(std::move(entries)); }

}  // namespace

TEST_SUITE("updates") {
  TEST_CASE("T4: the Executor's default is fast-forward: a rewind ends rejected with no POST; force moves it") {
    Setup s;
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    Outcome first = ex.submit(s.request("r", s.tip)).wait();
    REQUIRE_MESSAGE(first.kind == OutcomeKind::delivered, first.reason);
    const long posts = s.posts("r");

    DeliveryRequest rewind = s.request("r", s.rev("HEAD~2"));
    CHECK(rewind.update == UpdateMode::fast_forward);
    Outcome o = ex.submit(rewind).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::rejected, o.reason);
    CHECK_MESSAGE(o.reason.rfind("non-fast-forward", 0) == 0, o.reason);
    CHECK(o.remote_effect == RemoteEffect::none);
    CHECK_MESSAGE(s.posts("r") == posts, "a refused non-fast-forward still sent its POST");
    CHECK(s.remote_ref("r") == s.tip);

    rewind.update = UpdateMode::force;
    Outcome forced = ex.submit(rewind).wait();
    CHECK_MESSAGE(forced.kind == OutcomeKind::delivered, forced.reason);
    CHECK(s.remote_ref("r") == s.rev("HEAD~2"));
  }

  TEST_CASE("UpdateMode::expect_old without expect_old ends failed before any child exists") {
    Setup s;
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    DeliveryRequest req = s.request("r", s.tip);
    req.update = UpdateMode::expect_old;
    Outcome o = ex.submit(req).wait();
    CHECK(o.kind == OutcomeKind::failed);
    CHECK_MESSAGE(o.reason.find("expect_old") != std::string::npos, o.reason);
    CHECK(ex.spawned() == 0);
    CHECK(s.remote_ref("r").empty());
  }

  TEST_CASE(
      "J4: a forced delivery that failed with `possible` is delivered again as a lease, not judged fast-forward") {
    Setup s;
    s.server.create_bare_repo("r");
    ExecutorOptions eo = s.executor_options();
    eo.journal = s.journal_path;
    Executor ex(eo);
    REQUIRE(ex.submit(s.request("r", s.tip)).wait().kind == OutcomeKind::delivered);

    // The forced rewind's POST is held, then answered 500 without running
    // the backend: it is never applied, but the delivery cannot know that.
    s.server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    s.server.respond(test::RequestMatch::next("POST", "git-receive-pack"), 500);
    DeliveryRequest req = s.request("r", s.rev("HEAD~2"));
    req.id = "forced-rewind";
    req.update = UpdateMode::force;
    DeliveryHandle h = ex.submit(req);
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    s.server.release();
    Outcome first = h.wait();
    REQUIRE_MESSAGE(first.kind == OutcomeKind::transport_failed, first.reason);
    REQUIRE(first.remote_effect == RemoteEffect::possible);
    REQUIRE(s.remote_ref("r") == s.tip);

    // The host retries the same id, in the default mode: the journal makes
    // it a compare-and-swap on the old id it recorded, which still holds.
    DeliveryRequest retry = s.request("r", s.rev("HEAD~2"));
    retry.id = "forced-rewind";
    Outcome again = ex.submit(retry).wait();
    CHECK_MESSAGE(again.kind == OutcomeKind::delivered,
                  (std::string("the re-delivery of a forced attempt was judged as a fast-forward: ") + again.reason));
    CHECK(again.attempt == 2);
    CHECK(s.remote_ref("r") == s.rev("HEAD~2"));
  }

  TEST_CASE("fast_forward_refusal: git's order and words, read from the local repository") {
    test::TempDir dir;
    const std::string repo = dir.path() + "/r";
    test::make_source_repo(repo, 3);
    const std::string tip = test::git_ok({"rev-parse", "HEAD"}, repo);
    const std::string base = test::git_ok({"rev-parse", "HEAD~2"}, repo);
    const std::string tree = test::git_ok({"rev-parse", "HEAD^{tree}"}, repo);
    test::git_ok({"tag", "-a", "-m", "t", "annotated", "HEAD~2"}, repo);
    const std::string tag = test::git_ok({"rev-parse", "annotated"}, repo);
    const std::string zero(40, '0');
    const std::string missing(40, 'e');
    auto refusal = [&](const std::string& ref, const std::string& old_id, const std::string& new_id) {
      auto r = repo::fast_forward_refusal(repo, ref, old_id, new_id);
      REQUIRE_MESSAGE(r.has_value(), r.error().message);
      return r->value_or("");
    };
    CHECK(refusal("refs/heads/main", zero, tip).empty());
    CHECK(refusal("refs/heads/main", base, tip).empty());
    CHECK(refusal("refs/heads/main", tag, tip).empty());   // an annotated tag's commit, peeled
    CHECK(refusal("refs/heads/main", base, tag).empty());  // the same commit, as a tag
    CHECK(refusal("refs/heads/main", tip, base).rfind("non-fast-forward: ", 0) == 0);
    CHECK(refusal("refs/heads/main", missing, tip).rfind("fetch first: ", 0) == 0);
    CHECK(refusal("refs/heads/main", tree, tip).rfind("needs force: ", 0) == 0);
    CHECK(refusal("refs/tags/v1", base, tip).rfind("already exists: ", 0) == 0);
    CHECK(refusal("refs/tags/v1", zero, tip).empty());
  }

  TEST_CASE("--remote names: pushurl before url, insteadOf and pushInsteadOf as git applies them, several refused") {
    using cli::resolve_remote;
    auto named = resolve_remote("origin", config_of({{"remote.origin.url", "https://h/fetch.git"},
                                                     {"remote.origin.pushurl", "https://h/push.git"}}));
    REQUIRE(named.has_value());
    CHECK(named->name == std::optional<std::string>("origin"));
    CHECK(named->url == "https://h/push.git");
    auto url_only = resolve_remote("origin", config_of({{"remote.origin.url", "https://h/fetch.git"}}));
    CHECK(url_only->url == "https://h/fetch.git");
    // A URL given as it is: no name.
    auto given = resolve_remote("https://h/r.git", config_of({}));
    REQUIRE(given.has_value());
    CHECK_FALSE(given->name.has_value());
    CHECK(given->url == "https://h/r.git");
    // Rewriting: the longest insteadOf prefix; pushInsteadOf for a url
    // without a pushurl, before insteadOf; a pushurl only by insteadOf.
    const repo::GitConfig rewrites = config_of({{"url.https://h/.insteadof", "gh:"},
                                                {"url.https://h/deep/.insteadof", "gh:deep/"},
                                                {"url.https://push.h/.pushinsteadof", "gh:"},
                                                {"remote.a.url", "gh:deep/r.git"},
                                                {"remote.b.url", "gh:x.git"},
                                                {"remote.b.pushurl", "gh:y.git"}});
    CHECK(resolve_remote("gh:deep/r.git", config_of({{"url.https://h/.insteadof", "gh:"},
                                                     {"url.https://h/deep/.insteadof", "gh:deep/"}}))
              ->url == "https://h/deep/r.git");
    CHECK(resolve_remote("a", rewrites)->url == "https://push.h/deep/r.git");
    CHECK(resolve_remote("b", rewrites)->url == "https://h/y.git");
    // A word no remote could be named is a URL, for parse_remote to judge.
    auto odd = resolve_remote("not a url", config_of({}));
    REQUIRE(odd.has_value());
    CHECK_FALSE(odd->name.has_value());
    // Unknown, and several.
    auto unknown = resolve_remote("nosuch", config_of({{"remote.other.url", "https://h/o.git"}}));
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().message.find("'nosuch' does not appear to be a git repository") != std::string::npos);
    auto several =
        resolve_remote("o", config_of({{"remote.o.url", "https://h/1.git"}, {"remote.o.url", "https://u@h/2.git"}}));
    REQUIRE_FALSE(several.has_value());
    CHECK(several.error().message.find("2 push URLs") != std::string::npos);
    CHECK(several.error().message.find("u@") == std::string::npos);  // redacted
    // An empty value clears the values before it.
    auto cleared = resolve_remote(
        "o",
        config_of({{"remote.o.url", "https://h/1.git"}, {"remote.o.url", ""}, {"remote.o.url", "https://h/3.git"}}));
    REQUIRE(cleared.has_value());
    CHECK(cleared->url == "https://h/3.git");
  }

  TEST_CASE("remote_tracking: the first fetch refspec that maps the ref, a negative one excluding it") {
    test::TempDir dir;
    const std::string repo = dir.path() + "/r";
    const std::string tip = test::make_source_repo(repo, 1);
    test::git_ok({"update-ref", "refs/remotes/origin/main", tip}, repo);
    auto t = repo::remote_tracking(repo, {"+refs/heads/*:refs/remotes/origin/*"}, "refs/heads/main");
    REQUIRE(t.has_value());
    REQUIRE(t->has_value());
    CHECK((*t)->name == "refs/remotes/origin/main");
    CHECK((*t)->oid == std::optional<std::string>(tip));
    auto absent = repo::remote_tracking(repo, {"+refs/heads/*:refs/remotes/origin/*"}, "refs/heads/other");
    REQUIRE(absent.has_value());
    REQUIRE(absent->has_value());
    CHECK_FALSE((*absent)->oid.has_value());
    auto unmapped = repo::remote_tracking(repo, {"+refs/heads/main:refs/remotes/origin/main"}, "refs/tags/v1");
    REQUIRE(unmapped.has_value());
    CHECK_FALSE(unmapped->has_value());
    auto excluded =
        repo::remote_tracking(repo, {"+refs/heads/*:refs/remotes/origin/*", "^refs/heads/main"}, "refs/heads/main");
    REQUIRE(excluded.has_value());
    CHECK_FALSE(excluded->has_value());
  }
}

}  // namespace integration_updates
