// ref-sets.cpp — a delivery of several refs through the library, against
// real git http-backend behind the TLS fixture server (which counts every
// POST), read back with git: atomic branch-and-tag, a per-ref refusal with
// and without atomic, deletions, push options, and what the remote must
// offer for each (refused before anything is sent when it does not).
#include <sys/stat.h>

#include <doctest/doctest.h>

#include "push_setup.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_ref_sets {

using namespace courier;

namespace {

const std::string kZero(40, '0');

struct Setup : test::PushSetup {
  std::string tag;  // an annotated tag of the tip, v1
  Setup() : PushSetup(3) {
    test::git_ok({"tag", "-a", "v1", "-m", "release 1", tip}, source);
    tag = rev("refs/tags/v1");
  }

  // A branch and the tag, in one delivery.
  DeliveryRequest branch_and_tag(const std::string& repo_name) {
    DeliveryRequest r = request(repo_name, "");
    r.ref.clear();
    r.updates = {RefUpdate{"refs/heads/main", tip}, RefUpdate{"refs/tags/v1", tag}};
    return r;
  }

  // The remote's `update` hook (run once per ref) refuses `ref`, saying so.
  void refuse_in_update_hook(const std::string& repo_name, const std::string& ref) {
    const std::string hook = server.repo_path(repo_name) + "/hooks/update";
    test::write_file(hook,
                     "#!/bin/sh\nif [ \"$1\" = '" + ref + "' ]; then echo \"no $1 today\" >&2; exit 1; fi\nexit 0\n");
    REQUIRE(::chmod(hook.c_str(), 0755) == 0);
  }

  void remote_config(const std::string& repo_name, const std::string& key, const std::string& value) {
    test::git_ok({"--git-dir", server.repo_path(repo_name), "config", key, value});
  }
};

const RefOutcome& ref_of(const Outcome& o, const std::string& ref) {
  for (const auto& r : o.refs) {
    if (r.ref == ref) return r;
  }
  FAIL("the outcome does not name " << ref);
  throw;  // unreachable
}

}  // namespace

TEST_SUITE("ref-sets") {
  TEST_CASE("T4: a branch and an annotated tag in one atomic delivery: both applied, the tag delivered as a tag") {
    Setup s;
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    Outcome o = ex.submit(s.branch_and_tag("r")).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    REQUIRE(o.refs.size() == 2);
    CHECK(o.refs[0].status == RefStatus::ok);
    CHECK(o.refs[1].status == RefStatus::ok);
    CHECK(s.remote_ref("r") == s.tip);
    CHECK(s.remote_ref("r", "refs/tags/v1") == s.tag);
    CHECK(test::git_ok({"--git-dir", s.server.repo_path("r"), "cat-file", "-t", s.tag}) == "tag");
    CHECK(test::git({"--git-dir", s.server.repo_path("r"), "fsck", "--strict"}).ok());
    CHECK(s.posts("r") == 1);
  }

  TEST_CASE("T4: atomic, a hook refusing one ref: neither applied; the outcome names the refusal and the other ref") {
    Setup s;
    s.server.create_bare_repo("r");
    s.refuse_in_update_hook("r", "refs/tags/v1");
    Executor ex(s.executor_options());
    Outcome o = ex.submit(s.branch_and_tag("r")).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::rejected, o.reason);
    CHECK(o.remote_effect == RemoteEffect::refused);
    CHECK(ref_of(o, "refs/tags/v1").status == RefStatus::ng);
    CHECK_MESSAGE(ref_of(o, "refs/heads/main").status == RefStatus::ng, ref_of(o, "refs/heads/main").reason);
    CHECK_MESSAGE(o.reason.find("refs/tags/v1") != std::string::npos, o.reason);
    CHECK_MESSAGE(o.reason.find("refs/heads/main") != std::string::npos, o.reason);
    CHECK_MESSAGE(o.reason.find("no refs/tags/v1 today") != std::string::npos, o.reason);
    CHECK(s.remote_ref("r").empty());
    CHECK(s.remote_ref("r", "refs/tags/v1").empty());
  }

  TEST_CASE("T4: non-atomic, the same hook: the branch applied, the tag refused, the delivery rejected") {
    Setup s;
    s.server.create_bare_repo("r");
    s.refuse_in_update_hook("r", "refs/tags/v1");
    Executor ex(s.executor_options());
    DeliveryRequest r = s.branch_and_tag("r");
    r.atomic = Atomicity::non_atomic;
    Outcome o = ex.submit(r).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::rejected, o.reason);
    CHECK(ref_of(o, "refs/heads/main").status == RefStatus::ok);
    CHECK(ref_of(o, "refs/tags/v1").status == RefStatus::ng);
    CHECK(s.remote_ref("r") == s.tip);
    CHECK(s.remote_ref("r", "refs/tags/v1").empty());
  }

  TEST_CASE(
      "T4: a deletion removes the ref; a deletion of a ref the remote lacks is refused as git refuses it, "
      "nothing sent") {
    Setup s;
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    REQUIRE(ex.submit(s.branch_and_tag("r")).wait().kind == OutcomeKind::delivered);
    const long posts = s.posts("r");
    DeliveryRequest del = s.request("r", kZero);
    del.ref = "refs/tags/v1";
    Outcome gone = ex.submit(del).wait();
    CHECK_MESSAGE(gone.kind == OutcomeKind::delivered, gone.reason);
    CHECK(s.remote_ref("r", "refs/tags/v1").empty());
    CHECK(s.remote_ref("r") == s.tip);
    CHECK(s.posts("r") == posts + 1);
    Outcome again = ex.submit(del).wait();
    CHECK_MESSAGE(again.kind == OutcomeKind::rejected, again.reason);
    CHECK_MESSAGE(again.reason.find("remote ref does not exist") != std::string::npos, again.reason);
    CHECK(again.remote_effect == RemoteEffect::none);
    CHECK(s.posts("r") == posts + 1);
  }

  TEST_CASE("T4: push options reach the server's hooks; a server that does not offer them is refused, nothing sent") {
    Setup s;
    s.server.create_bare_repo("r");
    const std::string seen = s.dir.path() + "/options-seen";
    const std::string hook = s.server.repo_path("r") + "/hooks/pre-receive";
    test::write_file(hook, "#!/bin/sh\nprintf '%s|%s' \"$GIT_PUSH_OPTION_COUNT\" \"$GIT_PUSH_OPTION_0\" > '" + seen +
                               "'\ncat >/dev/null\nexit 0\n");
    REQUIRE(::chmod(hook.c_str(), 0755) == 0);
    Executor ex(s.executor_options());
    DeliveryRequest r = s.request("r", s.tip);
    r.push_options = {"ci.skip"};
    Outcome refused = ex.submit(r).wait();
    CHECK_MESSAGE(refused.kind == OutcomeKind::transport_failed, refused.reason);
    CHECK_MESSAGE(refused.reason.find("push-options") != std::string::npos, refused.reason);
    CHECK(refused.remote_effect == RemoteEffect::none);
    CHECK(s.posts("r") == 0);
    s.remote_config("r", "receive.advertisePushOptions", "true");
    Outcome o = ex.submit(r).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(test::read_file(seen) == "1|ci.skip");
  }

  TEST_CASE("T4: a server that does not offer atomic is refused for a multi-ref delivery unless it is non-atomic") {
    Setup s;
    s.server.create_bare_repo("r");
    s.remote_config("r", "receive.advertiseAtomic", "false");
    Executor ex(s.executor_options());
    Outcome refused = ex.submit(s.branch_and_tag("r")).wait();
    CHECK_MESSAGE(refused.kind == OutcomeKind::transport_failed, refused.reason);
    CHECK_MESSAGE(refused.reason.find("atomic") != std::string::npos, refused.reason);
    CHECK(refused.remote_effect == RemoteEffect::none);
    for (const auto& ref : refused.refs) CHECK(ref.status == RefStatus::not_attempted);
    CHECK(s.posts("r") == 0);
    DeliveryRequest r = s.branch_and_tag("r");
    r.atomic = Atomicity::non_atomic;
    Outcome o = ex.submit(r).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(s.remote_ref("r", "refs/tags/v1") == s.tag);
  }
}

}  // namespace integration_ref_sets
