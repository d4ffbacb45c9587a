// wire-ssh-remote.cpp — SSH remotes read by the one remote parser (H2):
// every spelling git accepts comes out as one canonical ssh:// remote and
// one lane, the user name kept in both; what cannot be one remote is
// refused (a password, no path, an ambiguous path with its canonical
// spelling); and the repository path git-receive-pack gets, quoted as
// git's sq_quote quotes it. tests/integration/ssh-remote-git.cpp compares
// the same readings with what git itself hands to ssh.
#include <doctest/doctest.h>

#include <string>

#include "wire/remote.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_wire_ssh_remote {

using namespace courier;

namespace {

std::string canonical(const std::string& text) {
  auto r = wire::parse_remote(text);
  REQUIRE_MESSAGE(r, text << ": " << r.error().message);
  return r->canonical;
}

std::string refusal(const std::string& text) {
  auto r = wire::parse_remote(text);
  REQUIRE_MESSAGE(!r, text << " was accepted as " << r->canonical);
  return r.error().message;
}

std::string lane(const std::string& text) {
  auto r = wire::lane_key(text);
  REQUIRE_MESSAGE(r, text << ": " << r.error().message);
  return *r;
}

std::string command(const std::string& text) {
  auto r = wire::parse_remote(text);
  REQUIRE_MESSAGE(r, text << ": " << r.error().message);
  return "git-receive-pack " + wire::shell_quote(wire::ssh_receive_pack_path(*r));
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("wire-ssh-remote") {
  TEST_CASE("H2: ssh://, git+ssh:// and ssh+git:// are one remote, host case and port 22 folded") {
    const std::string want = "ssh://git@example.com/owner/repo.git";
    for (const std::string spelling :
         {"ssh://git@example.com/owner/repo.git", "git+ssh://git@example.com/owner/repo.git",
          "ssh+git://git@example.com/owner/repo.git", "SSH://git@EXAMPLE.com:22/owner/repo.git",
          "Git+SSH://git@example.com:/owner/repo.git", "ssh://git@example.com/owner/repo.git/"}) {
      CHECK_MESSAGE(canonical(spelling) == want, spelling);
      CHECK_MESSAGE(lane(spelling) == lane(want), spelling);
    }
    CHECK(canonical("ssh://h:2222/x") == "ssh://h:2222/x");
    CHECK(lane("ssh://h:2222/x") != lane("ssh://h/x"));
  }

  TEST_CASE("H2: scp-like host:path is relative to the user's home; host:/path is absolute; never one remote") {
    CHECK(canonical("git@example.com:owner/repo.git") == "ssh://git@example.com/~/owner/repo.git");
    CHECK(canonical("example.com:x") == "ssh://example.com/~/x");
    CHECK(canonical("example.com:~/x") == "ssh://example.com/~/x");
    CHECK(canonical("example.com:/x") == "ssh://example.com/x");
    CHECK(canonical("example.com:~bob/x") == "ssh://example.com/~bob/x");
    CHECK(canonical("ssh://example.com/~/x") == canonical("example.com:x"));
    CHECK(lane("example.com:x") == lane("ssh://example.com/~/x"));
    CHECK(lane("example.com:x") != lane("example.com:/x"));
    CHECK(lane("example.com:~bob/x") != lane("example.com:/x"));
  }

  TEST_CASE("H2: the user name is part of the canonical remote and of the lane; no user is a lane of its own") {
    CHECK(canonical("alice@h:/srv/r") == "ssh://alice@h/srv/r");
    CHECK(lane("alice@h:/srv/r") != lane("bob@h:/srv/r"));
    CHECK(lane("alice@h:/srv/r") != lane("h:/srv/r"));
    CHECK(lane("alice@h:/srv/r") == lane("ssh://alice@H:22/srv/r.git"));
    auto r = wire::parse_remote("alice@h:/srv/r");
    REQUIRE(r);
    CHECK(r->user == "alice");
    CHECK(r->url.scheme == "ssh");
    CHECK(r->url.host == "h");
    CHECK(r->url.port == 22);
    CHECK(!r->url.userinfo);
  }

  TEST_CASE("H2: an IPv6 host, scp-like or in a URL, is written in brackets in its RFC 5952 form") {
    CHECK(canonical("git@[0:0::0001]:x") == "ssh://git@[::1]/~/x");
    CHECK(canonical("[::1]:/srv/x") == "ssh://[::1]/srv/x");
    CHECK(canonical("ssh://git@[0::1]:2222/x") == "ssh://git@[::1]:2222/x");
    CHECK(lane("git@[::1]:/x") == lane("ssh://git@[0:0:0:0:0:0:0:1]/x"));
    CHECK(has(refusal("[::1/x:y"), "[user@][address]:path"));
    CHECK(has(refusal("[zz::1]:x"), "IPv6"));
  }

  TEST_CASE("H2: a password in an ssh remote is refused and never shown, in either spelling") {
    const std::string url = refusal("ssh://git:s3cret@h/x");
    CHECK(has(url, "password"));
    CHECK(has(url, "ssh-key:FILE"));
    CHECK(!has(url, "s3cret"));
    const std::string scp = refusal("git:s3cret@h:x");
    CHECK(has(scp, "password"));
    CHECK(!has(scp, "s3cret"));
  }

  TEST_CASE("H2: an ambiguous ssh path is refused with its canonical spelling") {
    CHECK(has(refusal("ssh://h/a/../b"), "Write it as ssh://h/b"));
    CHECK(has(refusal("h:a//b"), "Write it as ssh://h/~/a/b"));
    CHECK(has(refusal("git@h:./x"), "Write it as ssh://git@h/~/x"));
  }

  TEST_CASE("H2: what cannot be an ssh remote is refused, saying why") {
    CHECK(has(refusal("ssh://h"), "no repository path"));
    CHECK(has(refusal("ssh://h/"), "no repository path"));
    CHECK(has(refusal("h:"), "no repository path"));
    CHECK(has(refusal(":x"), "no host"));
    CHECK(has(refusal("ssh://@h/x"), "empty user name"));
    CHECK(has(refusal("ssh://-oProxyCommand=x@h/x"), "starting with '-'"));
    CHECK(has(refusal("ssh://-h/x"), "starting with '-'"));
    CHECK(has(refusal("ssh://h/a%0Ab"), "control character"));
    CHECK(has(refusal("h:a\nb"), "control character"));
    CHECK(has(refusal("ssh://h/x?y"), "query"));
    CHECK(has(refusal("ssh://us%65r@h/x"), "user name"));
    // Not ssh: a local path, and other transports, as before.
    CHECK(has(refusal("./h:x"), "local path"));
    CHECK(has(refusal("/srv/h:x"), "local path"));
    CHECK(has(refusal("git://h/x"), "does not speak"));
  }

  TEST_CASE("H2: the path receive-pack gets is git's: decoded, '/~' made '~', an scp-like path byte for byte") {
    CHECK(command("git@example.com:owner/repo.git") == "git-receive-pack 'owner/repo.git'");
    CHECK(command("ssh://git@example.com/~/owner/repo.git") == "git-receive-pack 'owner/repo.git'");
    CHECK(command("h:/abs/x") == "git-receive-pack '/abs/x'");
    CHECK(command("ssh://h/~bob/x") == "git-receive-pack '~bob/x'");
    CHECK(command("ssh://h/a%20b") == "git-receive-pack '/a b'");
    CHECK(command("h:a%20b") == "git-receive-pack 'a%20b'");
    CHECK(command("h:it's here") == "git-receive-pack 'it'\\''s here'");
    CHECK(canonical("h:it's here") == "ssh://h/~/it's%20here");
    CHECK(command("git+ssh://u@h/a'b!c") == "git-receive-pack '/a'\\''b'\\!'c'");
  }

  TEST_CASE("H2: shell_quote is git's sq_quote: every ' and ! closed, escaped and reopened, nothing else touched") {
    CHECK(wire::shell_quote("") == "''");
    CHECK(wire::shell_quote("plain") == "'plain'");
    CHECK(wire::shell_quote("'") == "''\\'''");
    CHECK(wire::shell_quote("!") == "''\\!''");
    CHECK(wire::shell_quote("a''b") == "'a'\\'''\\''b'");
    CHECK(wire::shell_quote("$(x) `y` \"z\" \\ ; & | * ?") == "'$(x) `y` \"z\" \\ ; & | * ?'");
  }

  TEST_CASE("T1: check_scheme accepts ssh") {
    auto r = wire::parse_remote("git@h:x");
    REQUIRE(r);
    CHECK(wire::check_scheme(r->url, false));
  }
}

}  // namespace unit_wire_ssh_remote
