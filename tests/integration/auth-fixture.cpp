// auth-fixture.cpp — credentials on the wire: the fixture server
// demanding git-courier tokens (checked by courier-token-verifier) or HTTP
// Basic, driven with curl and with the real git client.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "auth/credential_minter.hpp"
#include "auth/crypto.hpp"
#include "auth/ed25519_minter.hpp"
#include "fixture_server.hpp"
#include "auth_support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_auth_fixture {

using namespace courier;
using namespace courier::auth;
using namespace courier::test::auth_support;

namespace {

struct Http {
  int status = 0;
  std::string headers;
  std::string body;
};

// One request with curl: no configuration file (-q), the fixture's CA, no
// proxy (the environment carries none).
Http curl(const test::FixtureServer& server, const std::string& method, const std::string& url,
          const std::optional<std::string>& header, const std::optional<std::string>& body = std::nullopt) {
  test::TempDir dir;
  std::vector<std::string> argv = {test::find_on_path("curl"),
                                   "-q",
                                   "-sS",
                                   "--cacert",
                                   server.ca_file(),
                                   "-o",
                                   dir.path() + "/body",
                                   "-D",
                                   dir.path() + "/headers",
                                   "-w",
                                   "%{http_code}",
                                   "-X",
                                   method};
  if (header) argv.insert(argv.end(), {"-H", *header});
  if (body) {
    write_file(dir.path() + "/request", *body);
    argv.insert(argv.end(), {"--data-binary", "@" + dir.path() + "/request", "-H",
                             "Content-Type: application/x-git-receive-pack-request", "-H", "Expect:"});
  }
  argv.push_back(url);
  const auto r = test::run(argv, {}, test::Stdin::bytes, {"PATH=/usr/bin:/bin", "HOME=" + dir.path()});
  REQUIRE_MESSAGE(r.exit_code == 0, "curl failed: ", r.err);
  return Http{std::stoi(r.out), test::read_file(dir.path() + "/headers"), test::read_file(dir.path() + "/body")};
}

}  // namespace

TEST_SUITE("auth") {
  TEST_CASE("fixture server with --verify-*: each leg needs its own fresh token, verified by courier-token-verifier") {
    TestKey k;
    TestKey stranger;
    const std::string public_file = k.dir.path() + "/public.txt";
    write_file(public_file, k.generated.public_key + "\n");
    test::FixtureOptions options;
    options.verify_key = public_file;
    test::FixtureServer server(options);
    server.create_bare_repo("r");
    const std::string remote = server.url("r");
    const std::string adv = wire::leg_url(remote, wire::Leg::advertisement);
    const std::string post = wire::leg_url(remote, wire::Leg::receive_pack);
    auto c = context(60'000, remote);
    Ed25519Minter minter(k.key);
    Ed25519Minter stranger_minter(stranger.key);

    const Http none = curl(server, "GET", adv, std::nullopt);
    CHECK(none.status == 401);
    CHECK(none.headers.find("WWW-Authenticate: Bearer") != std::string::npos);

    const std::string get_header = minter.mint(get_leg(c, adv)).value();
    const Http ok = curl(server, "GET", adv, get_header);
    CHECK_MESSAGE(ok.status == 200, ok.body, server.log());
    CHECK(ok.body.find("# service=git-receive-pack") != std::string::npos);

    const Http replay = curl(server, "GET", adv, get_header);
    CHECK(replay.status == 401);
    CHECK_MESSAGE(replay.body.find("replayed") != std::string::npos, replay.body);

    const std::string fresh = minter.mint(get_leg(c, adv)).value();
    const Http wrong_method = curl(server, "POST", post, fresh, std::string("0000"));
    CHECK(wrong_method.status == 401);
    CHECK_MESSAGE(wrong_method.body.find("wrong_method") != std::string::npos, wrong_method.body);

    const std::string body = "0000";
    const Http wrong_body =
        curl(server, "POST", post, minter.mint(post_leg(c, body, post)).value(), std::string("0001"));
    CHECK(wrong_body.status == 401);
    CHECK_MESSAGE(wrong_body.body.find("body_hash_mismatch") != std::string::npos, wrong_body.body);

    const Http posted = curl(server, "POST", post, minter.mint(post_leg(c, body, post)).value(), body);
    CHECK_MESSAGE(posted.status != 401, posted.body);

    const Http other_key = curl(server, "GET", adv, stranger_minter.mint(get_leg(c, adv)).value());
    CHECK(other_key.status == 401);
    CHECK_MESSAGE(other_key.body.find("unknown_key") != std::string::npos, other_key.body);

    const Http wrong_url =
        curl(server, "GET", remote + "/info/refs?service=git-upload-pack", minter.mint(get_leg(c, adv)).value());
    CHECK(wrong_url.status == 401);
    CHECK_MESSAGE(wrong_url.body.find("wrong_url") != std::string::npos, wrong_url.body);

    long unauthorized = 0;
    for (const auto& e : server.journal()) {
      if (std::find(e.faults.begin(), e.faults.end(), "unauthorized") != e.faults.end()) ++unauthorized;
    }
    CHECK(unauthorized == 6);
  }

  TEST_CASE(
      "fixture server with --basic-auth: the credential minter's header passes, real git pushes through a helper") {
    HelperSetup helper;
    test::FixtureOptions options;
    options.basic_auth = "alice:s3cret pass=word";
    test::FixtureServer server(options);
    const std::string bare = server.create_bare_repo("r");
    const std::string remote = server.url("r");
    const std::string adv = wire::leg_url(remote, wire::Leg::advertisement);

    const Http none = curl(server, "GET", adv, std::nullopt);
    CHECK(none.status == 401);
    CHECK(none.headers.find("WWW-Authenticate: Basic") != std::string::npos);
    const Http wrong = curl(server, "GET", adv, "Authorization: Basic " + base64_encode("alice:nope"));
    CHECK(wrong.status == 401);

    auto c = context(20'000, remote);
    CredentialMinter minter(c, helper.options());
    const Http ok = curl(server, "GET", adv, minter.mint(get_leg(c, adv)).value());
    CHECK_MESSAGE(ok.status == 200, ok.body);
    REQUIRE(minter.settle(true));
    const std::string log = test::read_file(helper.log);
    CHECK(log.find("action=get\nprotocol=https\nhost=127.0.0.1:" + std::to_string(server.port())) != std::string::npos);
    CHECK(log.find("action=store") != std::string::npos);

    // The same helper configuration serves the real git client.
    const std::string src = server.scratch_dir() + "/src";
    const std::string tip = test::make_source_repo(src, 2);
    const auto pushed =
        test::git({"push", remote, "HEAD:refs/heads/main"}, src,
                  {"GIT_CONFIG_GLOBAL=" + helper.dir.path() + "/gitconfig", "GIT_SSL_CAINFO=" + server.ca_file()});
    REQUIRE_MESSAGE(pushed.ok(), pushed.err);
    CHECK(test::git_ok({"--git-dir", bare, "rev-parse", "refs/heads/main"}) == tip);
  }
}

}  // namespace integration_auth_fixture
