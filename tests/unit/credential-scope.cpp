// credential-scope.cpp — where a service credential may be sent, as
// pure functions (no socket, no child): the scope entries in canonical form,
// the match by scheme, host, port and whole path segments, the refusals at
// start, and a resumed delivery held to the scope configured now. The same
// rule through a real `serve` is tests/integration/service-scope.cpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "service/credential_scope.hpp"
#include "service/resume.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_credential_scope {

using namespace courier;

namespace {

bool admits(const std::string& entry, const std::string& remote) {
  auto e = service::scope_entry(entry);
  REQUIRE_MESSAGE(e.has_value(), entry);
  return service::scope_admits({*e}, remote);
}

}  // namespace

TEST_SUITE("credential-scope") {
  TEST_CASE("A2: a scope entry admits its remote and what lies under it by whole path segments, nothing beside it") {
    CHECK(admits("https://h/org", "https://h/org"));
    CHECK(admits("https://h/org", "https://h/org/r.git"));
    CHECK(admits("https://h/org/", "https://h/org/team/r.git"));
    CHECK(admits("https://h/org/r.git", "https://h/org/r.git"));
    // A prefix of the text that is not a whole segment admits nothing.
    CHECK_FALSE(admits("https://h/org", "https://h/organisation"));
    CHECK_FALSE(admits("https://h/org", "https://h/organisation/r.git"));
    CHECK_FALSE(admits("https://h/org", "https://h/org.git"));
    CHECK_FALSE(admits("https://h/org/r", "https://h/org/r.git"));
    // Above or beside the entry: no.
    CHECK_FALSE(admits("https://h/org/team", "https://h/org/r.git"));
    CHECK_FALSE(admits("https://h/org/r.git", "https://h/org"));
    // The path's case is the server's business: not folded.
    CHECK_FALSE(admits("https://h/org", "https://h/Org/r.git"));
  }

  TEST_CASE("A2: a scope entry's scheme, host and port must be the remote's exactly; a whole host is https://h/") {
    CHECK(admits("https://h/", "https://h/r.git"));
    CHECK(admits("https://h", "https://h/a/b/r.git"));
    CHECK(admits("HTTPS://H:443/org", "https://h/org/r.git"));  // one canonical form
    CHECK_FALSE(admits("https://h/", "https://h:8443/r.git"));
    CHECK_FALSE(admits("https://h:8443/", "https://h/r.git"));
    CHECK_FALSE(admits("https://h/", "https://h.evil.example/r.git"));
    CHECK_FALSE(admits("https://h/", "https://hh/r.git"));
    CHECK_FALSE(admits("https://git.example/", "https://example/r.git"));
    CHECK_FALSE(admits("http://127.0.0.1:80/", "https://127.0.0.1/r.git"));
    CHECK_FALSE(admits("https://127.0.0.1:1234/", "https://127.0.0.1:12345/r.git"));
    // A remote that does not parse, or carries a password, is admitted by no scope.
    CHECK_FALSE(admits("https://h/", "https://h/a/../r.git"));
    CHECK_FALSE(admits("https://h/", "https://u:p@h/r.git"));
    CHECK_FALSE(service::scope_admits({}, "https://h/r.git"));
  }

  TEST_CASE("A2: serve's credentials each need a scope of remotes; a scope names a credential and is a remote") {
    auto ok = service::service_credentials({{"ci", "bearer:/t"}}, {{"ci", {"https://H/org/", "https://h2:8443"}}});
    REQUIRE(ok.has_value());
    CHECK(ok->at("ci").spec == "bearer:/t");
    CHECK(ok->at("ci").scope == std::vector<std::string>{"https://h/org", "https://h2:8443/"});

    auto none = service::service_credentials({{"ci", "bearer:/t"}}, {});
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().message.find("--credential ci has no scope") != std::string::npos);
    CHECK(none.error().message.find("--credential-scope ci=https://HOST/PATH") != std::string::npos);
    CHECK(none.error().message.find("/t") == std::string::npos);  // the file is not repeated

    auto stray = service::service_credentials({{"ci", "bearer:/t"}}, {{"ci", {"https://h/"}}, {"cd", {"https://h/"}}});
    REQUIRE_FALSE(stray.has_value());
    CHECK(stray.error().message.find("no --credential named cd") != std::string::npos);
    for (const char* bad : {"ssh://h/r.git", "https://u@h/org", "https://u:secret@h/org", "https://h/a/../b",
                            "https://h/org?x=1", "h:org"}) {
      CAPTURE(bad);
      auto refused = service::service_credentials({{"ci", "bearer:/t"}}, {{"ci", {bad}}});
      REQUIRE_FALSE(refused.has_value());
      CHECK(refused.error().message.rfind("--credential-scope ci: ", 0) == 0);
      CHECK(refused.error().message.find("secret") == std::string::npos);
    }
  }

  TEST_CASE("A2: a delivery resumed after a crash keeps to the scope configured now, whatever the journal says") {
    journal::Submission s;
    s.id = "left-1";
    s.repo = "/srv/r";
    s.remote = "https://attacker.example/r.git";
    s.ref = "refs/heads/main";
    s.oid = std::string(40, 'a');
    service::ServiceNote note;
    note.credential = "ci";
    const service::ServiceCredentials configured = {{"ci", {"bearer:/t", {"https://git.example/org"}}}};
    auto refused = service::resubmission(service::LeftBehind{s, note}, configured);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message.find("credential \"ci\" may not be sent to https://attacker.example/r.git") !=
          std::string::npos);
    s.remote = "https://git.example/org/r.git";
    auto resumed = service::resubmission(service::LeftBehind{s, note}, configured);
    REQUIRE(resumed.has_value());
    CHECK(resumed->credential_spec == "bearer:/t");
  }

  TEST_CASE("A5 H2: an ssh-key credential is scoped to ssh remotes only, its user kept; an https one never to ssh") {
    auto ok = service::service_credentials(
        {{"deploy", "ssh-key:/k"}}, {{"deploy", {"git@Git.example:org/r.git", "ssh://git@h2:2222/", "ssh://h/x"}}});
    REQUIRE(ok.has_value());
    CHECK(ok->at("deploy").scope ==
          std::vector<std::string>{"ssh://git@git.example/~/org/r.git", "ssh://git@h2:2222/", "ssh://h/x"});
    const auto& scope = ok->at("deploy").scope;
    CHECK(service::scope_admits(scope, "ssh://git@git.example/~/org/r.git"));
    CHECK(service::scope_admits(scope, "git+ssh://git@h2:2222/srv/any.git"));
    // Another user, no user, the absolute path beside the home-relative one, another port: not admitted.
    CHECK_FALSE(service::scope_admits(scope, "alice@git.example:org/r.git"));
    CHECK_FALSE(service::scope_admits(scope, "git.example:org/r.git"));
    CHECK_FALSE(service::scope_admits(scope, "git@git.example:/org/r.git"));
    CHECK_FALSE(service::scope_admits(scope, "ssh://git@h2/srv/any.git"));

    // The kinds never cross: an SSH key with an https entry, an https credential with an ssh entry.
    for (const auto& [spec, entry] : std::vector<std::pair<std::string, std::string>>{{"ssh-key:/k", "https://h/org"},
                                                                                      {"bearer:/t", "ssh://git@h/org"},
                                                                                      {"key:/k", "git@h:org"},
                                                                                      {"credential", "ssh://git@h/"}}) {
      CAPTURE(spec);
      CAPTURE(entry);
      auto refused = service::service_credentials({{"c", spec}}, {{"c", {entry}}});
      REQUIRE_FALSE(refused.has_value());
      CHECK(refused.error().message.rfind("--credential-scope c: ", 0) == 0);
      CHECK(refused.error().message.find("ssh") != std::string::npos);
    }
    auto none = service::service_credentials({{"deploy", "ssh-key:/k"}}, {});
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().message.find("--credential-scope deploy=ssh://USER@HOST/PATH") != std::string::npos);
  }
}

}  // namespace unit_credential_scope
