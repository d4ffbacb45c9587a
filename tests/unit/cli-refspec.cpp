// cli-refspec.cpp — `git courier push <remote> <refspec>` read as git reads
// it (rules X-CLI1, X-CLI2), process-free: a refspec's words
// (cli/refspec.hpp), its resolution against a table of local refs
// (cli/refspec_resolve.hpp) and git's defaults from a configuration given
// as entries (cli/push_default.hpp), each beside what git 2.39 says for the
// same input.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/push_default.hpp"
#include "cli/refspec.hpp"
#include "cli/refspec_resolve.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_cli_refspec {

using namespace courier;
using namespace courier::cli;

namespace {

// A repository on branch main with a tag v1, a remote-tracking branch and
// a branch topic; `objects` are the revisions that name an object.
repo::RefSnapshot refs_on_main() {
  repo::RefSnapshot s;
  s.refs = {"refs/heads/main", "refs/heads/topic", "refs/tags/v1", "refs/remotes/origin/main",
            "refs/remotes/origin/HEAD"};
  s.symbolic = {{"HEAD", "refs/heads/main"}, {"refs/remotes/origin/HEAD", "refs/remotes/origin/main"}};
  return s;
}

const std::string kId = "0123456789abcdef0123456789abcdef01234567";

bool probe(const std::string& rev) {
  for (const char* known : {"HEAD", "main~1", "v1^{}", "0123456789abcdef0123456789abcdef01234567"}) {
    if (rev == known) return true;
  }
  return rev.rfind("refs/", 0) == 0;
}

Result<PushTarget> resolve(const std::string& text, const repo::RefSnapshot& refs = refs_on_main()) {
  auto spec = parse_refspec(text);
  if (!spec) return tl::unexpected(spec.error());
  return resolve_refspec(*spec, refs, probe);
}

template <typename T>
std::string error_of(const Result<T>& r) {
  return r ? std::string("(resolved)") : r.error().message;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

repo::GitConfig config(std::vector<repo::ConfigEntry> entries) { return repo::GitConfig(std::move(entries)); }

}  // namespace

TEST_SUITE("cli-refspec") {
  TEST_CASE("X-CLI1: a refspec's words are read as git reads them: '+' forces, '@' is HEAD, the last ':' splits") {
    auto forced = parse_refspec("+main");
    REQUIRE(forced);
    CHECK(forced->force);
    CHECK(forced->src == "main");
    CHECK_FALSE(forced->dst.has_value());
    auto at = parse_refspec("@:refs/heads/x");
    REQUIRE(at);
    CHECK(at->src == "HEAD");
    CHECK(*at->dst == "refs/heads/x");
    auto plain = parse_refspec("HEAD~1:refs/heads/old");
    REQUIRE(plain);
    CHECK_FALSE(plain->force);
    CHECK(plain->src == "HEAD~1");
  }

  TEST_CASE("X-CLI1: a malformed refspec gets git's words: invalid refspec") {
    for (const char* bad : {"", "+", "main:", "main~1", "main:bad..name", "main:x.lock", "a:b:", "main:refs/heads/"}) {
      CAPTURE(bad);
      auto r = parse_refspec(bad);
      REQUIRE_FALSE(r);
      CHECK(r.error().message == std::string("invalid refspec '") + bad + "'");
    }
  }

  TEST_CASE("X-CLI1: a refspec git accepts but one delivery cannot honour is refused naming what git would do") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"refs/heads/*:refs/heads/*", "git would push every ref it matches"},
        {"^main", "git would leave the refs it matches out"},
        {":", "git would push every branch that has a branch of the same name"},
        {"+:", "git would push every branch that has a branch of the same name"},
    };
    for (const auto& [text, why] : cases) {
      CAPTURE(text);
      auto r = parse_refspec(text);
      REQUIRE_FALSE(r);
      CHECK_MESSAGE(has(r.error().message, why), r.error().message);
    }
    const Error several = several_refspecs({"main", "topic"});
    CHECK(has(several.message, "git would push each of them"));
    CHECK(has(several.message, "give them on the command line"));
  }

  TEST_CASE("X-CLI1: a short source names its branch or tag, and the destination is its full name") {
    auto main = resolve("main");
    REQUIRE_MESSAGE(main, error_of(main));
    CHECK(main->src == "refs/heads/main");
    CHECK(main->dst == "refs/heads/main");
    auto tag = resolve("v1");
    REQUIRE(tag);
    CHECK(tag->dst == "refs/tags/v1");
    // refs/remotes/ is a weak match: one alone is the source.
    auto tracking = resolve("origin/main");
    REQUIRE(tracking);
    CHECK(tracking->dst == "refs/remotes/origin/main");
    // HEAD on a branch pushes that branch, under its own name.
    auto head = resolve("HEAD");
    REQUIRE(head);
    CHECK(head->src == "HEAD");
    CHECK(head->dst == "refs/heads/main");
    auto forced = resolve("+topic");
    REQUIRE(forced);
    CHECK(forced->force);
    CHECK(forced->dst == "refs/heads/topic");
  }

  TEST_CASE("X-CLI1: a short destination takes the source's namespace, as git's guess does") {
    auto branch = resolve("main:other");
    REQUIRE(branch);
    CHECK(branch->dst == "refs/heads/other");
    auto from_head = resolve("HEAD:x");
    REQUIRE(from_head);
    CHECK(from_head->dst == "refs/heads/x");
    auto tag = resolve("v1:v2");
    REQUIRE(tag);
    CHECK(tag->dst == "refs/tags/v2");
    auto full = resolve(kId + ":refs/heads/pinned");
    REQUIRE(full);
    CHECK(full->src == kId);
    CHECK(full->dst == "refs/heads/pinned");
  }

  TEST_CASE("X-CLI1: a source that is not a ref needs a full destination, in git's words") {
    auto expr = resolve("main~1:x");
    REQUIRE_FALSE(expr);
    CHECK(has(expr.error().message, "The destination you provided is not a full refname"));
    CHECK(has(expr.error().message, "'main~1:refs/heads/x'"));
    auto id = resolve(kId);
    REQUIRE_FALSE(id);
    CHECK(id.error().message == kId + " cannot be resolved to branch");
    repo::RefSnapshot detached = refs_on_main();
    detached.symbolic.erase("HEAD");
    detached.head_detached = true;
    auto head = resolve("HEAD", detached);
    REQUIRE_FALSE(head);
    CHECK(has(head.error().message, "not a full refname"));
    CHECK(resolve("HEAD:refs/heads/x", detached)->dst == "refs/heads/x");
  }

  TEST_CASE("X-CLI1: an ambiguous or unknown source is refused as git refuses it") {
    repo::RefSnapshot both = refs_on_main();
    both.refs.insert("refs/tags/main");
    CHECK(error_of(resolve("main", both)) == "src refspec main matches more than one");
    CHECK(error_of(resolve("nosuch:refs/heads/x")) == "src refspec nosuch does not match any");
    // A branch and a remote-tracking ref of the same short name: the branch
    // (a strong match) wins, as in git.
    repo::RefSnapshot shadowed = refs_on_main();
    shadowed.refs.insert("refs/remotes/topic");
    CHECK(resolve("topic", shadowed)->dst == "refs/heads/topic");
  }

  TEST_CASE("X-CLI2: the remote defaults as git's does: pushRemote, pushDefault, the branch's remote, the only one") {
    const auto refs = refs_on_main();
    CHECK(*default_push_remote(config({{"remote.origin.url", "https://h/o.git"}}), refs) == "origin");
    CHECK(*default_push_remote(config({{"remote.solo.url", "https://h/s.git"}}), refs) == "solo");
    const std::vector<repo::ConfigEntry> two = {{"remote.a.url", "https://h/a.git"},
                                                {"remote.b.url", "https://h/b.git"}};
    auto none = default_push_remote(config(two), refs);
    REQUIRE_FALSE(none);
    CHECK(has(none.error().message, "No configured push destination."));
    auto with = [&](std::vector<repo::ConfigEntry> more) {
      auto e = two;
      e.insert(e.end(), more.begin(), more.end());
      return *default_push_remote(config(e), refs);
    };
    CHECK(with({{"branch.main.remote", "a"}}) == "a");
    CHECK(with({{"branch.main.remote", "a"}, {"remote.pushdefault", "b"}}) == "b");
    CHECK(with({{"remote.pushdefault", "b"}, {"branch.main.pushremote", "a"}}) == "a");
  }

  TEST_CASE("X-CLI2: push.default simple pushes the branch to its upstream of the same name, and says git's words") {
    const auto refs = refs_on_main();
    std::vector<repo::ConfigEntry> e = {{"remote.origin.url", "https://h/o.git"}};
    auto no_upstream = default_push_refspec(config(e), refs, "origin", true);
    REQUIRE_FALSE(no_upstream);
    CHECK(has(no_upstream.error().message, "The current branch main has no upstream branch."));
    e.push_back({"branch.main.remote", "origin"});
    e.push_back({"branch.main.merge", "refs/heads/main"});
    CHECK(*default_push_refspec(config(e), refs, "origin", true) == "refs/heads/main:refs/heads/main");
    // Another remote (triangular): as current.
    CHECK(*default_push_refspec(config(e), refs, "https://h/x.git", false) == "refs/heads/main:refs/heads/main");
    e.back().value = "refs/heads/trunk";
    auto mismatch = default_push_refspec(config(e), refs, "origin", true);
    REQUIRE_FALSE(mismatch);
    CHECK(has(mismatch.error().message, "The upstream branch of your current branch does not match"));
    CHECK(has(mismatch.error().message, "push origin HEAD:trunk"));
    e.push_back({"push.default", "upstream"});
    CHECK(*default_push_refspec(config(e), refs, "origin", true) == "refs/heads/main:refs/heads/trunk");
    auto elsewhere = default_push_refspec(config(e), refs, "other", true);
    REQUIRE_FALSE(elsewhere);
    CHECK(has(elsewhere.error().message, "which is not the upstream of"));
    e.back().value = "current";
    CHECK(*default_push_refspec(config(e), refs, "origin", true) == "refs/heads/main:refs/heads/main");
  }

  TEST_CASE("X-CLI2: remote.<name>.push comes first; matching, nothing and a detached HEAD are said as git says") {
    const auto refs = refs_on_main();
    CHECK(*default_push_refspec(config({{"remote.origin.push", "refs/heads/main:refs/heads/mirror"}}), refs, "origin",
                                true) == "refs/heads/main:refs/heads/mirror");
    auto several = default_push_refspec(
        config({{"remote.origin.push", "refs/heads/a:refs/heads/a"}, {"remote.origin.push", "refs/heads/b"}}), refs,
        "origin", true);
    REQUIRE_FALSE(several);
    CHECK(has(several.error().message, "git would push each of them"));
    auto nothing = default_push_refspec(config({{"push.default", "nothing"}}), refs, "origin", true);
    CHECK(nothing.error().message == "You didn't specify any refspecs to push, and push.default is \"nothing\".");
    auto matching = default_push_refspec(config({{"push.default", "matching"}}), refs, "origin", true);
    CHECK(has(matching.error().message, "git would push every branch that has a branch of the same name"));
    auto bogus = default_push_refspec(config({{"push.default", "bogus"}}), refs, "origin", true);
    CHECK(has(bogus.error().message, "malformed value for push.default: bogus"));
    repo::RefSnapshot detached = refs;
    detached.symbolic.erase("HEAD");
    detached.head_detached = true;
    auto head = default_push_refspec(config({{"push.default", "current"}}), detached, "origin", true);
    CHECK(has(head.error().message, "You are not currently on a branch."));
  }

  TEST_CASE("X-CLI1: the long options and the words of git's form are each said once; --all, --mirror refused") {
    CHECK(parse_push_args({"origin", "main"})->positional.size() == 2);
    auto twice = parse_push_args({"--remote", "origin", "upstream"});
    REQUIRE_FALSE(twice);
    CHECK(has(twice.error().message, "the remote is given twice"));
    CHECK(has(parse_push_args({"origin", "main", "--rev", "HEAD"}).error().message, "say what to push one way"));
    for (const char* flag : {"--all", "--branches", "--mirror", "--tags"}) {
      CAPTURE(flag);
      auto r = parse_push_args({flag, "origin"});
      REQUIRE_FALSE(r);
      CHECK(has(r.error().message, "git would push every"));
    }
    CHECK(has(parse_push_args({"--ref", "main"}).error().message, "needs --rev REV or --oid OID"));
  }

  TEST_CASE(
      "X-CLI6: several refspecs, :ref and --delete are read as git reads them, each judged before anything runs") {
    auto three = parse_push_args({"origin", "main", "v1:refs/tags/v1", "+topic", ":refs/heads/old"});
    REQUIRE_MESSAGE(three, error_of(three));
    CHECK(three->positional.size() == 5);
    auto gone = parse_refspec(":refs/heads/gone");
    REQUIRE(gone);
    CHECK(gone->deletes);
    CHECK(gone->src.empty());
    CHECK(*gone->dst == "refs/heads/gone");
    CHECK_FALSE(parse_refspec("main")->deletes);
    CHECK(has(parse_refspec("+:refs/heads/x").error().message, "invalid refspec"));
    CHECK(has(parse_refspec(":bad..name").error().message, "invalid refspec"));
    auto del = parse_push_args({"--delete", "origin", "old", "refs/tags/v0"});
    REQUIRE_MESSAGE(del, error_of(del));
    CHECK(del->delete_refs);
    CHECK(
        has(parse_push_args({"-d", "origin", "a:b"}).error().message, "--delete only accepts plain target ref names"));
    CHECK(has(parse_push_args({"--delete", "origin"}).error().message, "--delete doesn't make sense without any refs"));
    // A bad refspec among several is refused with the others unread.
    CHECK(has(parse_push_args({"origin", "main", "refs/heads/*"}).error().message, "has a wildcard"));
  }

  TEST_CASE("X-CLI6: --atomic, --no-atomic and -o/--push-option are read in order, an empty -o clearing the list") {
    auto atomic = parse_push_args({"--atomic", "origin", "main"});
    REQUIRE(atomic);
    CHECK(atomic->atomic == std::optional<bool>(true));
    CHECK(parse_push_args({"--no-atomic", "origin", "a", "b"})->atomic == std::optional<bool>(false));
    CHECK_FALSE(parse_push_args({"origin", "a", "b"})->atomic.has_value());  // automatic: atomic for more than one
    CHECK(has(parse_push_args({"--atomic=yes", "origin", "main"}).error().message, "takes no value"));
    auto options = parse_push_args(
        {"-o", "ci.skip", "--push-option=merge_request.create", "--push-option", "x=y", "origin", "main"});
    REQUIRE_MESSAGE(options, error_of(options));
    CHECK(options->push_options == std::vector<std::string>{"ci.skip", "merge_request.create", "x=y"});
    CHECK(options->push_options_given);
    auto cleared = parse_push_args({"-o", "a", "-o", "", "-o", "b", "origin", "main"});
    CHECK(cleared->push_options == std::vector<std::string>{"b"});
    CHECK(has(parse_push_args({"origin", "main", "-o"}).error().message, "needs a value"));
  }
}

}  // namespace unit_cli_refspec
