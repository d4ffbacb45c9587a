// stream-post.cpp — the pack streamed into the receive-pack POST as
// git pack-objects writes it (chunked, no spool file), where the POST's
// token does not bind the body; spooled, with the token's body hash, where
// it does (key: auth): with a Content-Length up to 1 MiB and chunked above
// it, as git sends a body; a streamed POST cut off
// mid-body is never sent again; a spool on a full disk says how much room
// it needed.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "auth/ed25519_minter.hpp"
#include "auth_support.hpp"
#include "auth/minter.hpp"
#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "push_setup.hpp"
#include "support.hpp"
#include "transport/http_leg.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_stream_post {

using namespace courier;

namespace {

using Setup = test::PushSetup;

DeliveryRequest git_engine_request(Setup& s, const std::string& repo_name, const std::string& oid) {
  DeliveryRequest r = s.request(repo_name, oid);
  r.pack_engine = PackEngine::git;
  return r;
}

// The fixture's one receive-pack POST for `repo_name`, or nothing.
std::optional<test::JournalEntry> the_post(test::FixtureServer& server, const std::string& repo_name) {
  std::optional<test::JournalEntry> found;
  for (const auto& e : server.journal()) {
    if (e.method == "POST" && e.path == "/" + repo_name + ".git/git-receive-pack") found = e;
  }
  return found;
}

// A commit holding `bytes` of incompressible data, on top of the source's
// history: a pack of about that size. Returns the new tip.
std::string add_large_commit(const std::string& source, std::size_t bytes) {
  std::string data(bytes, '\0');
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (char& c : data) {  // xorshift: incompressible, and the same every run
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  test::write_file(source + "/large.bin", data);
  test::git_ok({"add", "large.bin"}, source);
  test::git_ok({"commit", "-q", "-m", "large"}, source);
  return test::git_ok({"rev-parse", "HEAD"}, source);
}

// A minter whose header does not depend on the body (a bearer token's
// kind), counting its calls.
class FixedMinter : public auth::Minter {
 public:
  Result<std::string> mint(const auth::LegRequest&) override {
    ++calls;
    return std::string("Authorization: Bearer fixed");
  }
  bool binds_payload() const override { return false; }
  int calls = 0;
};

}  // namespace

TEST_SUITE("stream-post") {
  TEST_CASE(
      "T2: with the git engine and no payload-bound token the pack streams into one chunked POST without "
      "Content-Length, and git reads the pushed history back") {
    Setup s(5);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    Outcome o = ex.submit(git_engine_request(s, "r", s.tip)).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(o.objects == 15u);  // 5 commits, each with its tree and blob
    CHECK(s.remote_ref("r") == s.tip);
    CHECK(test::git({"--git-dir", s.server.repo_path("r"), "fsck", "--strict"}).ok());
    auto post = the_post(s.server, "r");
    REQUIRE(post);
    CHECK_MESSAGE(post->chunked, std::string("the POST was not sent chunked"));
    CHECK_FALSE(post->header("Content-Length"));
    CHECK(post->header("Transfer-Encoding") == std::optional<std::string>("chunked"));
    CHECK(o.bytes_sent == static_cast<std::uint64_t>(post->body_bytes));
    CHECK(s.posts("r") == 1);
  }

  TEST_CASE(
      "A2: with key: auth the pack is spooled: the POST carries a Content-Length and a token whose ph the "
      "server's verifier checks against the body it received") {
    // The ph claim itself is proven by the auth suite's "A2: a POST token
    // carries ph = base64url(SHA-256(body)); it verifies only with that
    // body"; here the fixture's verifier refuses (401) a token whose ph
    // does not match the body that arrived.
    test::auth_support::TestKey key;
    test::FixtureOptions fo;
    fo.verify_key = key.path;
    Setup s(3, fo);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    DeliveryRequest req = git_engine_request(s, "r", s.tip);
    req.mint = test::auth_support::key_mint(key, req.remote, req.ref, req.oid);
    Outcome o = ex.submit(req).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(s.remote_ref("r") == s.tip);
    auto post = the_post(s.server, "r");
    REQUIRE(post);
    CHECK_FALSE(post->chunked);
    CHECK(post->header("Content-Length") == std::optional<std::string>(std::to_string(post->body_bytes)));
    CHECK(post->header("Authorization").has_value());
  }

  TEST_CASE(
      "A2: with key: auth a spooled body over 1 MiB goes chunked, as git sends it, and the server's verifier checks "
      "the token's ph against every byte it received") {
    // The fixture de-chunks the body and refuses (401) a token whose ph is
    // not the SHA-256 of it: a byte sent but not hashed (or hashed but not
    // sent) ends the delivery auth_failed. The spool is read in pieces of
    // kSpoolReadBytes, so this body is several reads and several chunks.
    test::auth_support::TestKey key;
    test::FixtureOptions fo;
    fo.verify_key = key.path;
    Setup s(2, fo);
    const std::string tip = add_large_commit(s.source, 3 << 20);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    DeliveryRequest req = git_engine_request(s, "r", tip);
    req.mint = test::auth_support::key_mint(key, req.remote, req.ref, req.oid);
    Outcome o = ex.submit(req).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(s.remote_ref("r") == tip);
    CHECK(test::git({"--git-dir", s.server.repo_path("r"), "fsck", "--strict"}).ok());
    auto post = the_post(s.server, "r");
    REQUIRE(post);
    CHECK(post->body_bytes > static_cast<long long>(transport::kChunkedBodyAbove));
    CHECK_MESSAGE(post->chunked, std::string("the spooled body over 1 MiB was not sent chunked"));
    CHECK_FALSE(post->header("Content-Length"));
    CHECK(post->header("Authorization").has_value());
    CHECK(o.bytes_sent == static_cast<std::uint64_t>(post->body_bytes));
    CHECK(s.posts("r") == 1);
  }

  TEST_CASE("A2: the gate mints a POST without a body hash only for a minter that does not bind the body") {
    auth::MintContext ctx;
    ctx.remote = "https://h.example/r.git";
    ctx.ref = "refs/heads/main";
    ctx.oid = std::string(40, 'a');
    ctx.deadline = sys::mono_now_ns() + 30'000 * sys::kNsPerMs;
    const MintRequest unhashed{"receive-pack", "POST", "https://h.example/r.git/git-receive-pack", std::nullopt,
                               std::nullopt};
    auto streaming = std::make_shared<FixedMinter>();
    auth::MintGate open(streaming, ctx, nullptr);
    CHECK(open.answer(unhashed).header == std::optional<std::string>("Authorization: Bearer fixed"));
    // A minter that binds the body (the default) never sees such a request.
    class Binding : public FixedMinter {
      bool binds_payload() const override { return true; }
    };
    auto binding = std::make_shared<Binding>();
    auth::MintGate bound(binding, ctx, nullptr);
    MintAnswer a = bound.answer(unhashed);
    CHECK_FALSE(a.header);
    CHECK(a.refused.find("SHA-256") != std::string::npos);
    CHECK(binding->calls == 0);
  }

  TEST_CASE(
      "T2 J2: a streamed POST the server cuts off mid-body is sent once and never again, and its remote_effect is "
      "possible") {
    Setup s(2);
    const std::string tip = add_large_commit(s.source, 4 << 20);
    s.server.create_bare_repo("r");
    s.server.command(
        {{"cmd", "close_mid_body"}, {"method", "POST"}, {"path", "git-receive-pack"}, {"after_bytes", 64 * 1024}});
    Executor ex(s.executor_options());
    Outcome o = ex.submit(git_engine_request(s, "r", tip)).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::transport_failed, o.reason);
    CHECK(o.remote_effect == RemoteEffect::possible);
    CHECK_MESSAGE(s.posts("r") == 1, std::string("the POST was sent again after it failed"));
    auto post = the_post(s.server, "r");
    REQUIRE(post);
    CHECK(post->chunked);
    CHECK(post->faults == std::vector<std::string>{"close_mid_body"});
    CHECK(s.remote_ref("r").empty());
  }

  TEST_CASE("X-MSG2 spool: on a full disk the spool's error says where and how much room it needed") {
    test::TempDir dir;
    const std::string small = dir.path() + "/small";
    const test::Tmpfs tmpfs(small, "256k");
    if (!tmpfs.mounted) {
      MESSAGE("skipped: " << tmpfs.why);
      return;
    }
    Setup s(1);
    const std::string tip = add_large_commit(s.source, 1 << 20);
    s.server.create_bare_repo("r");
    // The CLI's child gets TMPDIR from the parent, and spools there: the
    // libgit2 engine always spools.
    auto r = test::run(
        {COURIER_BINARY, "push", "--repo", s.source, "--remote", s.server.url("r"), "--ref", "refs/heads/main", "--rev",
         tip, "--ca-file", s.server.ca_file(), "--lane-dir", dir.path() + "/lanes", "--pack-engine", "libgit2"},
        {}, test::Stdin::bytes, {"PATH=/usr/bin:/bin", "LANG=C", "TMPDIR=" + small});
    CHECK(r.exit_code != 0);
    const std::string parent = small + "/git-courier-" + std::to_string(::geteuid());
    CHECK_MESSAGE(r.err.find("the pack spool in " + parent + "/git-courier-scratch-") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find("needs at least ") != std::string::npos, r.err);
    CHECK(s.posts("r") == 0);
  }
}

}  // namespace integration_stream_post
