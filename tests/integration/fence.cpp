// fence.cpp — rule L3's fence: every credential of a delivery under a
// lane lease carries the lease's fence, the `claimed` journal entry records
// it, and the token verifier a server runs keeps the highest fence per
// repository and refuses a lower one — so a stale holder (a host whose
// lease was taken over, still pushing) is refused. Without a verifier,
// receive-pack's old-id check is what stops a stale holder's POST.
#include <doctest/doctest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "auth/ed25519_minter.hpp"
#include "auth/minter.hpp"
#include "auth/verify.hpp"
#include "courier/courier.hpp"
#include "journal/journal.hpp"
#include "push_setup.hpp"
#include "auth_support.hpp"
#include "wire/remote.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_fence {

using namespace courier;
using namespace courier::test::auth_support;

namespace {

// The fence recorded with a delivery's `claimed` entry (nullopt: none).
std::optional<std::int64_t> claimed_fence(journal::Journal& j, const std::string& id) {
  auto rec = j.find(id);
  REQUIRE(rec.has_value());
  REQUIRE(rec->has_value());
  const auto claimed = (*rec)->last(journal::Step::claimed);
  REQUIRE(claimed.has_value());
  const auto detail = nlohmann::json::parse(claimed->detail);
  if (!detail.contains("fence")) return std::nullopt;
  return detail["fence"].get<std::int64_t>();
}

// A delivery of `oid` signed by `key`, under lease fence `fence`.
DeliveryRequest fenced(test::PushSetup& s, const std::string& id, const std::string& oid, std::int64_t fence,
                       const std::shared_ptr<const auth::Ed25519Key>& key) {
  DeliveryRequest r = s.request("r", oid);
  r.id = id;
  r.fence_for_tests = fence;
  auth::MintContext c;
  c.remote = wire::parse_remote(r.remote).value().canonical;
  c.ref = r.ref;
  c.oid = oid;
  c.deadline = sys::mono_now_ns() + 30'000 * sys::kNsPerMs;
  r.mint = auth::make_mint_callback(std::make_shared<auth::Ed25519Minter>(key), c, nullptr);
  return r;
}

// courier-token-verifier run once on a fresh token for the advertisement
// leg with fence `fence`, its fence state in `state`: {exit code, stderr}.
test::RunResult run_verifier(const TestKey& k, const auth::Ed25519Minter& minter, const std::string& state,
                             std::int64_t fence) {
  const std::string public_file = k.dir.path() + "/public.txt";
  test::write_file(public_file, k.generated.public_key + "\n");
  auto leg = get_leg(context());
  leg.fence = fence;
  return test::run({COURIER_TOKEN_VERIFIER, "--replay-dir", k.dir.path() + "/replay", "--fence-state", state,
                    public_file, "GET", kAdvertisementUrl, "-", minter.token(leg).value()},
                   {}, test::Stdin::bytes, test::cli_env());
}

}  // namespace

TEST_SUITE("lease") {
  TEST_CASE(
      "L3: the verifier's fence state with a repository twice, nested 100,000 deep or of 50 MB refuses every fenced "
      "token (fail closed), naming why; it never counts the later, lower fence and never crashes") {
    TestKey k;
    auth::Ed25519Minter minter(k.key);
    const std::string state = k.dir.path() + "/fences.json";
    auto first = run_verifier(k, minter, state, 7);
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    // The repository as the verifier keys it, from what it wrote.
    const auto written = nlohmann::json::parse(test::read_file(state));
    REQUIRE(written.size() == 1);
    const std::string repo = written.begin().key();
    // Each file refuses a fence it would otherwise accept (a lower one, or a
    // higher one it would write back).
    auto refused_with = [&](const std::string& text, const std::string& why, std::int64_t fence) {
      test::write_file(state, text);
      REQUIRE(::chmod(state.c_str(), 0600) == 0);
      auto r = run_verifier(k, minter, state, fence);
      CHECK_MESSAGE(r.exit_code == 1, "exit " << r.exit_code << ": " << r.err);
      CHECK_MESSAGE(r.err.find(why) != std::string::npos, r.err);
    };
    // {"r":7,"r":2}: last-wins would count 2, and accept fence 3.
    refused_with("{\"" + repo + "\":7,\"" + repo + "\":2}", "twice in one object", 3);
    refused_with("{\"" + repo + "\":7,\"x\":" + std::string(100'000, '[') + std::string(100'000, ']') + "}",
                 "deeper than 64 levels", 8);
    refused_with("{\"" + repo + "\":7,\"x\":\"" + std::string(50'000'000, 'x') + "\"}", "at most 1048576 are read", 8);
    // A sound file again: the highest fence stands, the lower one is refused.
    test::write_file(state, "{\"" + repo + "\":7}");
    CHECK(run_verifier(k, minter, state, 3).exit_code == 1);
    CHECK(run_verifier(k, minter, state, 8).exit_code == 0);
  }

  TEST_CASE("L3: every token of a fenced delivery carries the fence claim; the verifier refuses a lower one") {
    TestKey k;
    auth::Ed25519Minter minter(k.key);
    auto c = context();
    auto leg = get_leg(c);
    leg.fence = 7;
    const auto t7 = split_token(minter.token(leg).value());
    CHECK(t7.claims["fence"] == 7);
    auto unfenced = get_leg(c);
    CHECK_FALSE(split_token(minter.token(unfenced).value()).claims.contains("fence"));

    const auto trusted = std::vector<auth::PublicKey>{auth::public_key_from_raw(k.key->public_raw()).value()};
    auth::MemoryReplayCache replay;
    auth::MemoryFenceStore fences;
    auth::VerifyRequest req{"GET", kAdvertisementUrl, std::nullopt, 0};
    auto verify = [&](std::optional<std::int64_t> fence, const auth::VerifyOptions& o = {}) {
      auto l = get_leg(c);
      l.fence = fence;
      req.now_unix =
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
      return auth::verify_token(minter.token(l).value(), req, trusted, replay, fences, o);
    };
    CHECK(verify(7).has_value());
    CHECK(verify(7).has_value());  // the same holder's next leg
    auto stale = verify(5);
    REQUIRE_FALSE(stale.has_value());
    CHECK(stale.error().code == auth::VerifyErrc::stale_fence);
    CHECK_MESSAGE(stale.error().message.find("fence 5") != std::string::npos, stale.error().message);
    CHECK_MESSAGE(stale.error().message.find("fence 7") != std::string::npos, stale.error().message);
    // The same repository spelled another way shares the fence (one lane).
    auto other_spelling = get_leg(c, "https://127.0.0.1:8443/TEAM/r/info/refs?service=git-receive-pack");
    other_spelling.fence = 6;
    req.url = other_spelling.url;
    const auto folded = auth::verify_token(minter.token(other_spelling).value(), req, trusted, replay, fences);
    CHECK_FALSE(folded.has_value());
    req.url = kAdvertisementUrl;
    CHECK(verify(8).has_value());  // a newer holder
    CHECK_FALSE(verify(7).has_value());
    // No fence: accepted as before, unless required.
    CHECK(verify(std::nullopt).has_value());
    auth::VerifyOptions strict;
    strict.require_fence = true;
    auto bare = verify(std::nullopt, strict);
    REQUIRE_FALSE(bare.has_value());
    CHECK(bare.error().code == auth::VerifyErrc::fence_required);
  }

  TEST_CASE(
      "L3: a stale holder (fence 5 after fence 7 delivered) is refused by the verifier: auth_failed, fence named") {
    TestKey k;
    const std::string public_file = k.dir.path() + "/public.txt";
    test::write_file(public_file, k.generated.public_key + "\n");
    test::FixtureOptions fo;
    fo.verify_key = public_file;
    test::PushSetup s(3, fo);
    s.server.create_bare_repo("r");
    const std::string first = s.rev("HEAD~1");
    auto opts = s.executor_options(CgroupMode::off);
    opts.journal = s.dir.path() + "/journal.db";
    Outcome o7;
    Outcome o5;
    {
      Executor ex(opts);
      o7 = ex.submit(fenced(s, "holder-7", first, 7, k.key)).wait();
      o5 = ex.submit(fenced(s, "holder-5", s.tip, 5, k.key)).wait();
    }
    REQUIRE_MESSAGE(o7.kind == OutcomeKind::delivered, o7.reason);
    REQUIRE_MESSAGE(o5.kind == OutcomeKind::auth_failed, (std::string(outcome_name(o5.kind)) + ": " + o5.reason));
    CHECK_MESSAGE(o5.reason.find("fence 5") != std::string::npos, o5.reason);
    CHECK_MESSAGE(o5.reason.find("fence 7") != std::string::npos, o5.reason);
    CHECK(o5.remote_effect == RemoteEffect::none);
    CHECK(s.remote_ref("r") == first);  // read back with git: the stale holder moved nothing
    CHECK(s.posts("r") == 1);
    auto j = journal::open_sqlite(opts.journal);
    REQUIRE(j.has_value());
    CHECK(claimed_fence(**j, "holder-7") == 7);
    CHECK(claimed_fence(**j, "holder-5") == 5);
  }

  TEST_CASE("L3: without a verifier, a stale holder's POST with an out-of-date old id is rejected by receive-pack") {
    test::PushSetup s(2);
    s.server.create_bare_repo("r");
    const std::string base = s.tip;
    // Two diverging commits on the same base: the stale holder's and the
    // new holder's.
    test::git_ok({"checkout", "-q", "-b", "stale"}, s.source);
    test::write_file(s.source + "/stale.txt", "stale\n");
    test::git_ok({"add", "stale.txt"}, s.source);
    test::git_ok({"commit", "-q", "-m", "stale"}, s.source);
    const std::string stale_tip = s.rev("HEAD");
    test::git_ok({"checkout", "-q", "-b", "fresh", base}, s.source);
    test::write_file(s.source + "/fresh.txt", "fresh\n");
    test::git_ok({"add", "fresh.txt"}, s.source);
    test::git_ok({"commit", "-q", "-m", "fresh"}, s.source);
    const std::string fresh_tip = s.rev("HEAD");
    {
      Executor seed(s.executor_options(CgroupMode::off));
      REQUIRE(seed.submit(s.request("r", base)).wait().kind == OutcomeKind::delivered);
    }
    // Two hosts: two executors with lane directories of their own, so the
    // lane lock does not serialise them — only the lease would.
    auto old_opts = s.executor_options(CgroupMode::off);
    old_opts.journal = s.dir.path() + "/old.db";
    auto new_opts = s.executor_options(CgroupMode::off);
    new_opts.lane_dir = s.dir.path() + "/lanes-new";
    new_opts.journal = s.dir.path() + "/new.db";
    s.server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    Executor old_host(old_opts);
    DeliveryRequest stale = s.request("r", stale_tip);
    stale.id = "stale";
    stale.fence_for_tests = 5;
    auto h = old_host.submit(stale);
    // The stale holder has read the advertisement (old id = base) and is at its POST.
    REQUIRE(s.server.wait_for_held(20'000).has_value());
    Outcome fresh;
    {
      Executor new_host(new_opts);
      DeliveryRequest r = s.request("r", fresh_tip);
      r.id = "fresh";
      r.fence_for_tests = 8;
      fresh = new_host.submit(r).wait();
    }
    s.server.release();
    const Outcome o = h.wait();
    REQUIRE_MESSAGE(fresh.kind == OutcomeKind::delivered, fresh.reason);
    REQUIRE_MESSAGE(o.kind == OutcomeKind::rejected, (std::string(outcome_name(o.kind)) + ": " + o.reason));
    CHECK(o.remote_effect == RemoteEffect::refused);
    CHECK(s.remote_ref("r") == fresh_tip);
    auto jo = journal::open_sqlite(old_opts.journal);
    auto jn = journal::open_sqlite(new_opts.journal);
    REQUIRE(jo.has_value());
    REQUIRE(jn.has_value());
    CHECK(claimed_fence(**jo, "stale") == 5);
    CHECK(claimed_fence(**jn, "fresh") == 8);
  }
}

}  // namespace integration_fence
