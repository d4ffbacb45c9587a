// service-scope.cpp — a service credential goes only to the remotes of
// its scope, through the shipped `git-courier serve`: a caller names the
// credential and a remote of its choosing; a remote outside the scope is
// refused before anything is journalled or spawned, and the server behind
// it sees no request at all (each fixture server logs every request with its
// headers). The matching rule itself, case by case, is
// tests/unit/credential-scope.cpp.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixture_server.hpp"
#include "journal/journal.hpp"
#include "service_support.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_service_scope {

using namespace courier;
using nlohmann::json;

namespace {

constexpr const char* kToken = "scope-test-token-5d1f0c9e7a";

// Two https servers, one service: `inside` holds the scope's repositories,
// `outside` stands for a server of the caller's choosing (same path, another
// port). The service trusts both servers' CAs, so that nothing but the
// scope keeps the token from `outside`.
struct ScopeScene {
  test::FixtureServer inside;
  test::FixtureServer outside;
  test::TempDir dir;
  std::string root;
  std::string source;
  std::string token_file;
  std::string ca_bundle;

  ScopeScene() {
    root = dir.path() + "/repos";
    std::filesystem::create_directories(root);
    source = root + "/source";
    test::make_source_repo(source, 2);
    for (const char* name : {"org/r", "organisation", "org"}) inside.create_bare_repo(name);
    outside.create_bare_repo("org/r");
    token_file = dir.path() + "/ci.token";
    test::write_file(token_file, std::string(kToken) + "\n");
    ::chmod(token_file.c_str(), 0600);
    ca_bundle = dir.path() + "/ca-bundle.pem";
    std::ofstream bundle(ca_bundle);
    bundle << std::ifstream(inside.ca_file()).rdbuf() << std::ifstream(outside.ca_file()).rdbuf();
  }
  // https://127.0.0.1:PORT/org, the URL prefix `ci` may be sent to.
  std::string scope() const { return "https://127.0.0.1:" + std::to_string(inside.port()) + "/org"; }
  std::vector<std::string> flags() const {
    return {"--ca-file", ca_bundle, "--credential", "ci=bearer:" + token_file, "--credential-scope", "ci=" + scope()};
  }
  json body(const std::string& remote) const {
    return {{"repo", source}, {"remote", remote}, {"ref", "refs/heads/main"}, {"rev", "HEAD"}, {"credential", "ci"}};
  }
};

std::vector<journal::Record> journalled(const std::string& path) {
  if (!std::filesystem::exists(path)) return {};
  auto j = journal::open_sqlite(path);
  REQUIRE(j.has_value());
  auto r = (*j)->recent(100);
  REQUIRE(r.has_value());
  return *r;
}

// The refusal as the caller reads it: 403, the code, the credential and the
// remote named, the secret and its file never.
void check_refused(const test::Http& h, const std::string& remote, const ScopeScene& s) {
  CHECK(h.status == 403);
  // Read without throwing: an accepted submission has no error object.
  const bool has_error = h.body.is_object() && h.body.contains("error") && h.body["error"].is_object();
  const json error = has_error ? h.body["error"] : json::object();
  CHECK(error.value("code", "") == "credential_out_of_scope");
  CHECK(error.value("field", "") == "credential");
  const std::string message = error.value("message", "");
  CHECK_MESSAGE(message.find("credential \"ci\" may not be sent to " + remote) != std::string::npos, message);
  CHECK(h.raw.find(kToken) == std::string::npos);
  CHECK(h.raw.find(s.token_file) == std::string::npos);
}

}  // namespace

TEST_SUITE("service-scope") {
  TEST_CASE(
      "A2 service: a named bearer credential goes only to its scope: a submit naming another https server is refused "
      "403 before anything is journalled or spawned and that server sees no request; one inside the scope delivers "
      "with the token") {
    ScopeScene s;
    test::ServeProcess svc(s.dir.path() + "/state", s.root, s.flags());
    REQUIRE_MESSAGE(svc.up(), svc.log());

    const std::string elsewhere = s.outside.url("org/r");
    check_refused(svc.post(s.body(elsewhere)), elsewhere, s);
    CHECK(journalled(svc.journal()).empty());
    CHECK(svc.log().find("\"event\":\"submitted\"") == std::string::npos);

    const test::Http ok = svc.post(s.body(s.inside.url("org/r")));
    REQUIRE_MESSAGE(ok.status == 202, std::string(ok.raw + svc.log()));
    const auto events = svc.events(ok.body["id"]);
    REQUIRE_FALSE(events.empty());
    CHECK(events.back()["outcome"]["outcome"] == "delivered");
    long authorised = 0;
    for (const auto& e : s.inside.journal()) {
      CHECK(e.header("Authorization").value_or("") == std::string("Bearer ") + kToken);
      ++authorised;
    }
    CHECK(authorised >= 2);  // the advertisement and the POST

    // The other server never heard from the service: no request, no connection.
    CHECK(s.outside.journal().empty());
    CHECK(s.outside.count().connections == 0);
    CHECK(journalled(svc.journal()).size() == 1);
    CHECK(svc.log().find(kToken) == std::string::npos);
    CHECK(svc.stop() == 0);
  }

  TEST_CASE(
      "A2 service: a credential's URL prefix holds at a path-segment boundary: scope https://h/org refuses "
      "https://h/organisation.git and https://h/org.git, and nothing reaches the server") {
    ScopeScene s;
    test::ServeProcess svc(s.dir.path() + "/state", s.root, s.flags());
    REQUIRE_MESSAGE(svc.up(), svc.log());
    for (const char* name : {"organisation", "org"}) {
      const std::string remote = s.inside.url(name);
      CAPTURE(remote);
      check_refused(svc.post(s.body(remote)), remote, s);
    }
    CHECK(s.inside.journal().empty());
    CHECK(journalled(svc.journal()).empty());
    CHECK(svc.stop() == 0);
  }

  TEST_CASE(
      "A2 service: push --via naming the service's credential for a remote outside its scope is a usage error (exit 2) "
      "saying credential_out_of_scope; the remote's server sees nothing") {
    ScopeScene s;
    test::ServeProcess svc(s.dir.path() + "/state", s.root, s.flags());
    REQUIRE_MESSAGE(svc.up(), svc.log());
    const std::string elsewhere = s.outside.url("org/r");
    std::vector<std::string> argv = {"/usr/bin/env", "-i"};
    for (const auto& e : test::cli_env()) argv.push_back(e);
    for (const auto& a : {"HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"})
      argv.push_back(a);
    for (const auto& a : {std::string(COURIER_BINARY), std::string("push"), std::string("--via"), svc.socket(),
                          std::string("--credential"), std::string("ci"), std::string("--repo"), s.source,
                          std::string("--remote"), elsewhere, std::string("--ref"), std::string("refs/heads/main"),
                          std::string("--rev"), std::string("HEAD"), std::string("--json")}) {
      argv.push_back(a);
    }
    const auto r = test::run(argv);
    CHECK_MESSAGE(r.exit_code == 2, std::string(r.out + r.err));
    const json j = json::parse(r.out, nullptr, false);
    CHECK((j.is_object() && j.value("outcome", "") == "usage"));
    const std::string message = j.is_object() ? j.value("message", "") : "";
    CHECK_MESSAGE(message.find("credential_out_of_scope") != std::string::npos, r.out);
    CHECK(r.out.find(kToken) == std::string::npos);
    CHECK(s.outside.journal().empty());
    CHECK(journalled(svc.journal()).empty());
    CHECK(svc.stop() == 0);
  }

  TEST_CASE(
      "A2 service: serve refuses to start with a credential that has no scope, on the command line or in --config, "
      "and says how to add one") {
    ScopeScene s;
    const std::string config = s.dir.path() + "/serve.json";
    test::write_file(config, json{{"credential", json::array({"ci=bearer:" + s.token_file})}}.dump());
    for (const auto& flags : {std::vector<std::string>{"--credential", "ci=bearer:" + s.token_file},
                              std::vector<std::string>{"--config", config}}) {
      CAPTURE(flags.back());
      test::ServeProcess svc(s.dir.path() + "/state", s.root, flags);
      CHECK_FALSE(svc.up());
      CHECK(svc.stop() == 2);
      const std::string log = svc.log();
      CHECK_MESSAGE(log.find("\"event\":\"config_error\"") != std::string::npos, log);
      CHECK_MESSAGE(log.find("--credential ci has no scope") != std::string::npos, log);
      CHECK_MESSAGE(log.find("--credential-scope ci=https://HOST/PATH") != std::string::npos, log);
      CHECK(log.find(kToken) == std::string::npos);
    }
  }
}

}  // namespace integration_service_scope
