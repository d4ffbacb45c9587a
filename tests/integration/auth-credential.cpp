// auth-credential.cpp — the `credential` minter against a credential
// helper configured for the test only (its own GIT_CONFIG_GLOBAL, never the
// real one), the `bearer:FILE` minter, and auth specs.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "auth/auth_spec.hpp"
#include "auth/bearer_minter.hpp"
#include "auth/credential_minter.hpp"
#include "auth/crypto.hpp"
#include "fixture_server.hpp"
#include "sys/events.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"
#include "auth_support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_auth_credential {

using namespace courier;
using namespace courier::auth;
using namespace courier::test::auth_support;
namespace fs = std::filesystem;

namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_SUITE("auth") {
  TEST_CASE("credential query: protocol, host with a non-default port, decoded path, user name from the URL") {
    auto q = credential_query("https://127.0.0.1:8443/team/r%20x.git");
    REQUIRE(q);
    CHECK(q->lines() == "protocol=https\nhost=127.0.0.1:8443\npath=team/r x.git\n");
    q = credential_query("https://Example.COM:443/r.git");
    REQUIRE(q);
    CHECK(q->host == "example.com");
    q = credential_query("https://bob@example.com/r.git");
    REQUIRE(q);
    CHECK(q->username.value() == "bob");
    CHECK_FALSE(credential_query("https://example.com/r%0a.git"));
    CHECK_FALSE(credential_query("https://example.com/r.git?x"));
  }

  TEST_CASE("A2: every document that states the credential settle bound states the code's kCredentialSettleBound") {
    // One number, written in two guides: each mention reads
    // "`kCredentialSettleBound`" followed by its value in seconds.
    const std::string want = std::to_string(kCredentialSettleBound / sys::kNsPerMs / 1000) + " s";
    int mentions = 0;
    for (const char* doc : {"docs/auth.md", "docs/operations.md"}) {
      std::ifstream in(test::source_path(doc));
      REQUIRE(in.good());
      std::stringstream text;
      text << in.rdbuf();
      const std::string body = text.str();
      for (auto at = body.find("kCredentialSettleBound`"); at != std::string::npos;
           at = body.find("kCredentialSettleBound`", at + 1)) {
        ++mentions;
        // The value is written next to the name: "2 s (`kCredentialSettleBound`)" or "`kCredentialSettleBound` (2 s)".
        const std::string around = body.substr(at >= 12 ? at - 12 : 0, 50);
        const std::string why =
            std::string(doc) + " states another settle bound than the code's " + want + ": ..." + around;
        CHECK_MESSAGE(around.find(want) != std::string::npos, why);
      }
    }
    CHECK(mentions >= 2);
  }

  TEST_CASE("credential minter: fills once per delivery, mints Basic per leg, approves or rejects afterwards") {
    HelperSetup helper;
    auto c = context(20'000, kRemote);
    CredentialMinter minter(c, helper.options());
    CHECK_FALSE(minter.has_credential());
    auto first = minter.mint(get_leg(c));
    REQUIRE_MESSAGE(first, first.error().message);
    CHECK(*first == "Authorization: Basic " + base64_encode("alice:s3cret pass=word"));
    auto second = minter.mint(post_leg(c, "body"));
    REQUIRE(second);
    CHECK(*second == *first);
    CHECK(minter.has_credential());

    std::string log = test::read_file(helper.log);
    CHECK(count(log, "action=get") == 1);  // cached for the delivery
    CHECK(log.find("protocol=https\nhost=127.0.0.1:8443\n") != std::string::npos);

    REQUIRE(minter.settle(true));
    REQUIRE(minter.settle(true));  // once only
    log = test::read_file(helper.log);
    CHECK(count(log, "action=store") == 1);
    CHECK(log.find("username=alice\npassword=s3cret pass=word") != std::string::npos);
    CHECK(count(log, "action=erase") == 0);

    CredentialMinter refused(c, helper.options());
    REQUIRE(refused.mint(get_leg(c)));
    REQUIRE(refused.reject());
    log = test::read_file(helper.log);
    CHECK(count(log, "action=erase") == 1);

    // Nothing filled, nothing to tell.
    CredentialMinter unused(c, helper.options());
    REQUIRE(unused.settle(false));
    CHECK(count(test::read_file(helper.log), "action=erase") == 1);
  }

  TEST_CASE("credential minter: no credential from any helper is a refusal naming git's reason, never a prompt") {
    HelperSetup helper("silent");
    auto c = context(20'000, kRemote);
    CredentialMinter minter(c, helper.options());
    auto r = minter.mint(get_leg(c));
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("git credential fill failed") != std::string::npos);
    CHECK_MESSAGE(r.error().message.find("terminal prompts disabled") != std::string::npos, r.error().message);

    HelperSetup colon("colon");
    CredentialMinter bad(c, colon.options());
    auto b = bad.mint(get_leg(c));
    REQUIRE_FALSE(b);
    CHECK(b.error().message.find("':'") != std::string::npos);
  }

  TEST_CASE("credential minter: a helper that never answers is killed at the deadline, with its process group") {
    HelperSetup helper("wedge");
    auto c = context(400, kRemote);
    CredentialMinter minter(c, helper.options());
    const auto start = sys::mono_now_ns();
    auto r = minter.mint(get_leg(c));
    const double ms = sys::ns_to_ms(sys::mono_now_ns() - start);
    test::report("credential helper", "deadline to helper killed", ms - 400, "ms");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("did not finish in time") != std::string::npos);
    CHECK(ms >= 400);
    CHECK(ms < 2'000);
    // The helper (a grandchild: git started it) was in the killed group.
    // Its pidfd becomes readable when it has terminated (or opening it fails:
    // already gone).
    const std::string pid_text = test::read_file(helper.pid_file);
    REQUIRE_FALSE(pid_text.empty());
    const auto pid = static_cast<pid_t>(std::stol(pid_text));
    auto pidfd = sys::pidfd_open(pid);
    if (pidfd) {
      auto ready = sys::wait_readable_until({pidfd->get()}, sys::mono_now_ns() + 2'000 * sys::kNsPerMs);
      REQUIRE(ready);
      CHECK_MESSAGE(!ready->empty(), "helper ", pid, " survived the kill");
    }
  }

  TEST_CASE("T2: a repository git refuses for its owner is refused, or set aside with a note where the host allows") {
    // The global helper (the process's own configuration) answers alice; the
    // repository's would answer its owner's credential.
    HelperSetup helper;
    const std::string repo = helper.dir.path() + "/repo";
    test::git_ok({"init", "-q", repo});
    const std::string owners = helper.dir.path() + "/owners.sh";
    const std::string owners_log = helper.dir.path() + "/owners.log";
    test::write_file(owners, "#!/bin/sh\necho \"$1\" >> '" + owners_log + "'\necho username=owner; echo password=x\n");
    REQUIRE(::chmod(owners.c_str(), 0755) == 0);
    // An empty value first clears the helpers read before (the global one).
    test::git_ok({"config", "--add", "credential.helper", ""}, repo);
    test::git_ok({"config", "--add", "credential.helper", owners}, repo);
    auto c = context(20'000, kRemote);
    c.repo = repo;
    auto options = helper.options();
    // git's own test switch: every repository looks owned by someone else.
    options.env->push_back("GIT_TEST_ASSUME_DIFFERENT_OWNER=1");

    CredentialMinter refused(c, options);
    auto r = refused.mint(get_leg(c));
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(r.error().message.find("dubious ownership") != std::string::npos, r.error().message);

    std::vector<std::string> notes;
    options.untrusted_repo_falls_back = true;
    options.on_note = [&](const std::string& n) { notes.push_back(n); };
    CredentialMinter aside(c, options);
    auto minted = aside.mint(get_leg(c));
    REQUIRE_MESSAGE(minted, minted.error().message);
    CHECK(*minted == "Authorization: Basic " + base64_encode("alice:s3cret pass=word"));
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("dubious ownership") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(owners_log));

    // Trusted, the repository's helper is the one asked.
    options.env->pop_back();
    CredentialMinter own(c, options);
    auto mine = own.mint(get_leg(c));
    REQUIRE_MESSAGE(mine, mine.error().message);
    CHECK(*mine == "Authorization: Basic " + base64_encode("owner:x"));
  }

  TEST_CASE("run_git_credential: the helper environment is the one given (no GIT_* leaks from ours)") {
    HelperSetup helper;
    auto git = find_git(helper.env);
    REQUIRE_MESSAGE(git, git.error().message);
    auto run = run_git_credential(*git, "fill", "protocol=https\nhost=h.example\n\n", helper.env,
                                  sys::mono_now_ns() + 10'000 * sys::kNsPerMs);
    REQUIRE_MESSAGE(run, run.error().message);
    CHECK(run->exit_code == 0);
    CHECK(run->out.find("password=s3cret pass=word") != std::string::npos);
    const auto def = credential_environment();
    CHECK(std::count(def.begin(), def.end(), std::string("GIT_TERMINAL_PROMPT=0")) == 1);
  }

  TEST_CASE("bearer minter: the file's token, trimmed; empty, missing or header-breaking files are refused") {
    test::TempDir dir;
    const std::string file = dir.path() + "/token";
    test::write_file(file, "  abc.DEF-123_~+/=\n\n");
    auto token = read_bearer_token(file);
    REQUIRE_MESSAGE(token, token.error().message);
    CHECK(*token == "abc.DEF-123_~+/=");
    BearerMinter minter(*token);
    CHECK(minter.mint(get_leg(context())).value() == "Authorization: Bearer abc.DEF-123_~+/=");

    auto expect_error = [&](const std::string& content, const std::string& needle) {
      test::write_file(file, content);
      auto r = read_bearer_token(file);
      REQUIRE_FALSE(r);
      CHECK_MESSAGE(r.error().message.find(needle) != std::string::npos, r.error().message);
    };
    expect_error("", "empty");
    expect_error(" \n\t\n", "empty");
    expect_error("two words", "whitespace");
    expect_error("line1\nline2", "whitespace");
    expect_error("tok\x01", "control");
    auto missing = read_bearer_token(dir.path() + "/absent");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("no such file") != std::string::npos);
  }

  TEST_CASE("auth specs: parsed, files checked up front, errors name the problem") {
    CHECK(parse_auth_spec("none").value().kind == AuthSpec::Kind::none);
    CHECK(parse_auth_spec("credential").value().kind == AuthSpec::Kind::credential);
    auto key = parse_auth_spec("key:relative/k.pem");
    REQUIRE(key);
    CHECK(key->kind == AuthSpec::Kind::key);
    CHECK(fs::path(key->file).is_absolute());
    CHECK(parse_auth_spec("bearer:/t").value().file == "/t");
    for (const char* bad : {"", "key:", "bearer:", "Key:x", "credential:x", "basic", "none "}) {
      CAPTURE(bad);
      auto r = parse_auth_spec(bad);
      REQUIRE_FALSE(r);
      CHECK(r.error().code == Errc::invalid_argument);
    }

    test::TempDir dir;
    auto missing = minter_factory("key:" + dir.path() + "/absent.pem");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("no such file") != std::string::npos);
    test::write_file(dir.path() + "/not-a-key.pem", "hello");
    auto garbage = minter_factory("key:" + dir.path() + "/not-a-key.pem");
    REQUIRE_FALSE(garbage);
    CHECK(garbage.error().message.find("not a PEM private key") != std::string::npos);
    test::write_file(dir.path() + "/empty", "\n");
    auto empty = minter_factory("bearer:" + dir.path() + "/empty");
    REQUIRE_FALSE(empty);
    CHECK(empty.error().message.find("empty") != std::string::npos);

    auto none = minter_factory("none");
    REQUIRE(none);
    CHECK((*none)(context()).value() == nullptr);

    TestKey k;
    auto keyed = minter_factory("key:" + k.path);
    REQUIRE_MESSAGE(keyed, keyed.error().message);
    auto m = (*keyed)(context()).value();
    REQUIRE(m != nullptr);
    CHECK(m->mint(get_leg(context())).value().rfind("Authorization: Bearer ey", 0) == 0);

    // A bearer file is read per delivery: a rotated token is picked up.
    const std::string token_file = dir.path() + "/token";
    test::write_file(token_file, "first\n");
    auto bearer = minter_factory("bearer:" + token_file);
    REQUIRE(bearer);
    CHECK((*bearer)(context()).value()->mint(get_leg(context())).value() == "Authorization: Bearer first");
    test::write_file(token_file, "second\n");
    CHECK((*bearer)(context()).value()->mint(get_leg(context())).value() == "Authorization: Bearer second");

    HelperSetup helper;
    FactoryOptions options;
    options.credential = helper.options();
    auto credential = minter_factory("credential", options);
    REQUIRE(credential);
    auto cm = (*credential)(context(20'000)).value();
    CHECK(cm->mint(get_leg(context(20'000))).value() ==
          "Authorization: Basic " + base64_encode("alice:s3cret pass=word"));
  }
}

}  // namespace integration_auth_credential
