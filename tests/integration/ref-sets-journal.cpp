// ref-sets-journal.cpp — a delivery of several refs, journalled, against
// real git http-backend behind the TLS fixture server: a deadline that
// strikes while the remote holds the POST (a pre-receive hook blocked on a
// FIFO) leaves every sent ref `possible` with its old id journalled, and
// the id's compare-and-swap re-delivery after one ref moved is refused as
// stale for that ref (atomic: for the whole), read back with git.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "held_remote.hpp"
#include "push_setup.hpp"
#include "seat/admission.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_ref_sets_journal {

using namespace courier;

namespace {

const std::string kZero(40, '0');
const std::string kBranch = "refs/heads/main";
const std::string kTag = "refs/tags/v1";

using test::HeldRemote;

struct Setup : test::JournalledSetup {
  std::string tag;
  std::string before;  // main on the remote before the delivery
  Setup() : JournalledSetup(4) {
    test::git_ok({"tag", "-a", "v1", "-m", "release 1", tip}, source);
    tag = rev(kTag);
    before = rev("HEAD~1");
    server.create_bare_repo("r");
    test::git_ok({"push", server.repo_path("r"), before + ":" + kBranch}, source);
  }

  DeliveryRequest branch_and_tag(const std::string& id, Atomicity atomic, std::int64_t budget_ms) {
    DeliveryRequest r = with_id(id, "", budget_ms);
    r.ref.clear();
    r.oid.clear();
    r.updates = {RefUpdate{kBranch, tip}, RefUpdate{kTag, tag}};
    r.atomic = atomic;
    return r;
  }

  // A first attempt whose deadline strikes while the remote holds its POST.
  Outcome held_at_deadline(const std::string& id, Atomicity atomic) {
    HeldRemote held(dir.path(), server.repo_path("r"));
    Executor ex(journalled());
    Outcome o = ex.submit(branch_and_tag(id, atomic, 4'000)).wait();
    // The hook ran: the POST had reached the remote when the deadline struck.
    REQUIRE_MESSAGE(held.entered(), "the POST never reached the remote: " << o.reason);
    held.release("no");
    std::remove((server.repo_path("r") + "/hooks/pre-receive").c_str());
    return o;
  }
};

}  // namespace

TEST_SUITE("ref-sets-journal") {
  TEST_CASE("J2 J1: a deadline during a POST of several refs leaves every sent ref possible, its old id journalled") {
    Setup s;
    const Outcome o = s.held_at_deadline("held-1", Atomicity::atomic);
    CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
    REQUIRE(o.refs.size() == 2);
    CHECK(o.refs[0].ref == kBranch);
    CHECK(o.refs[1].ref == kTag);
    for (const RefOutcome& r : o.refs) {
      CHECK(r.status == RefStatus::unknown);
      CHECK(r.remote_effect == RemoteEffect::possible);
    }
    CHECK(o.refs[0].old_oid == s.before);
    CHECK(o.refs[1].old_oid == kZero);
    CHECK(o.remote_effect == RemoteEffect::possible);
    // The journal: every ref's old id at post_started, and which were sent.
    const journal::Record r = s.record("held-1");
    auto post = r.last(journal::Step::post_started);
    REQUIRE(post.has_value());
    const auto detail = nlohmann::json::parse(post->detail);
    CHECK(detail["old_oids"][kBranch] == s.before);
    CHECK(detail["old_oids"][kTag] == kZero);
    CHECK(detail["sent"] == nlohmann::json::array({kBranch, kTag}));
    CHECK(r.submission.updates.size() == 2);
    CHECK(r.submission.atomic);
    // The finished entry carries every ref.
    auto finished = journal::outcome_from_detail(r.last(journal::Step::finished)->detail);
    REQUIRE(finished.has_value());
    CHECK(finished->refs == o.refs);
  }

  TEST_CASE("J4: an atomic compare-and-swap re-delivery after one ref moved is refused as stale, nothing sent") {
    Setup s;
    const Outcome first = s.held_at_deadline("cas-atomic", Atomicity::atomic);
    REQUIRE(first.remote_effect == RemoteEffect::possible);
    const std::string moved = s.rev("HEAD~2");
    test::git_ok({"--git-dir", s.server.repo_path("r"), "update-ref", kBranch, moved});
    const long posts = s.posts("r");
    Executor ex(s.journalled());
    const Outcome again = ex.submit(s.branch_and_tag("cas-atomic", Atomicity::atomic, 30'000)).wait();
    CHECK(again.attempt == 2);
    CHECK_MESSAGE(again.kind == OutcomeKind::rejected, again.reason);
    REQUIRE(again.refs.size() == 2);
    CHECK(again.refs[0].status == RefStatus::rejected);
    CHECK(again.refs[0].reason.find("stale info") != std::string::npos);
    CHECK(again.refs[1].status == RefStatus::not_attempted);
    CHECK(again.remote_effect == RemoteEffect::none);
    CHECK(s.posts("r") == posts);
    CHECK(s.remote_ref("r") == moved);
    CHECK(s.remote_ref("r", kTag).empty());
  }

  TEST_CASE("J4: a non-atomic compare-and-swap re-delivery refuses the moved ref as stale and sends the other") {
    Setup s;
    const Outcome first = s.held_at_deadline("cas-each", Atomicity::non_atomic);
    REQUIRE(first.remote_effect == RemoteEffect::possible);
    const std::string moved = s.rev("HEAD~2");
    test::git_ok({"--git-dir", s.server.repo_path("r"), "update-ref", kBranch, moved});
    Executor ex(s.journalled());
    const Outcome again = ex.submit(s.branch_and_tag("cas-each", Atomicity::non_atomic, 30'000)).wait();
    CHECK_MESSAGE(again.kind == OutcomeKind::rejected, again.reason);
    REQUIRE(again.refs.size() == 2);
    CHECK(again.refs[0].status == RefStatus::rejected);
    CHECK(again.refs[0].reason.find("stale info") != std::string::npos);
    CHECK(again.refs[1].status == RefStatus::ok);
    CHECK(again.remote_effect == RemoteEffect::mixed);
    CHECK(s.remote_ref("r") == moved);
    CHECK(s.remote_ref("r", kTag) == s.tag);
  }

  TEST_CASE("J4: the same id with another set of refs is refused before anything runs") {
    Setup s;
    Executor ex(s.journalled());
    const Outcome first = ex.submit(s.branch_and_tag("set-1", Atomicity::atomic, 30'000)).wait();
    REQUIRE_MESSAGE(first.kind == OutcomeKind::delivered, first.reason);
    DeliveryRequest other = s.branch_and_tag("set-1", Atomicity::atomic, 30'000);
    other.updates.pop_back();
    const Outcome refused = ex.submit(other).wait();
    CHECK(refused.kind == OutcomeKind::failed);
    CHECK(refused.reason.find("another set of ref updates") != std::string::npos);
    REQUIRE(refused.refs.size() == 1);
    CHECK(refused.refs[0].status == RefStatus::not_attempted);
    // The same set in another order is the same request: replayed.
    DeliveryRequest reordered = s.branch_and_tag("set-1", Atomicity::atomic, 30'000);
    std::swap(reordered.updates[0], reordered.updates[1]);
    const Outcome replayed = ex.submit(reordered).wait();
    CHECK(replayed.replayed);
    CHECK(replayed.kind == OutcomeKind::delivered);
  }
}

}  // namespace integration_ref_sets_journal
