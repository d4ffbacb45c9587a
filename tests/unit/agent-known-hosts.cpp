// agent-known-hosts.cpp — the parent's known_hosts reader: the names ssh
// looks a host up under, hashed entries as ssh-keygen -H writes them,
// `[host]:port`, negation and wildcards, @revoked (never accepted) and
// @cert-authority (refused, with words saying so), and the message for a
// host with no entry.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "agent/known_hosts.hpp"
#include "agent/ssh_target.hpp"
#include "agent/ssh_text.hpp"
#include "support.hpp"

namespace unit_agent_known_hosts {

using namespace courier;
using agent::host_key_alias;
using agent::known_host_keys;

namespace {

// Two distinct Ed25519 public keys (as "type base64") and their blobs.
const std::string kKeyA = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINX9QiX1zdGNqPuJj7rXZw1JqUZFsOH/mQeWLS9T4c6c";
const std::string kKeyB = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHSE4NU6DTvjcxsKy2Rj8NkI+p8PmcLLOQp8UjkIz8Lk";

std::string blob(const std::string& line) { return *agent::base64_decode(line.substr(line.find(' ') + 1)); }

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_SUITE("agent-known-hosts") {
  TEST_CASE(
      "A5: the name looked up is the host on port 22 and [host]:port otherwise, and [host]:port entries match only "
      "it") {
    CHECK(host_key_alias("git.example.com", 22) == "git.example.com");
    CHECK(host_key_alias("127.0.0.1", 2222) == "[127.0.0.1]:2222");
    const std::string text = "[127.0.0.1]:2222 " + kKeyA + "\n127.0.0.1 " + kKeyB + "\n";
    auto on_port = known_host_keys(text, "kh", host_key_alias("127.0.0.1", 2222));
    REQUIRE(on_port.has_value());
    CHECK(on_port->accepted == std::vector<std::string>{blob(kKeyA)});
    auto on_22 = known_host_keys(text, "kh", "127.0.0.1");
    REQUIRE(on_22.has_value());
    CHECK(on_22->accepted == std::vector<std::string>{blob(kKeyB)});
  }

  TEST_CASE("A5: a host with no entry is refused with words naming the host, the file and how to add it") {
    auto none = known_host_keys("other.example " + kKeyA + "\n", "/home/u/.ssh/known_hosts", "[127.0.0.1]:2222");
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().message ==
          "no host key known for [127.0.0.1]:2222 in /home/u/.ssh/known_hosts; add it with ssh-keyscan -p 2222 "
          "127.0.0.1 >> /home/u/.ssh/known_hosts after checking its fingerprint");
    test::TempDir dir;
    auto missing = agent::read_known_hosts(dir.path() + "/absent", "git.example.com");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().message.find("no host key known for git.example.com in " + dir.path() + "/absent") == 0);
  }

  TEST_CASE("A5: entries hashed by ssh-keygen -H are matched for their host and port only") {
    test::TempDir dir;
    const std::string file = dir.path() + "/known_hosts";
    write(file, "127.0.0.1 " + kKeyA + "\n[127.0.0.1]:2222 " + kKeyB + "\n");
    const auto r = test::run({"/usr/bin/ssh-keygen", "-H", "-f", file});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const std::string hashed = slurp(file);
    REQUIRE(hashed.find("|1|") == 0);
    CHECK(hashed.find("127.0.0.1") == std::string::npos);
    auto plain = agent::read_known_hosts(file, "127.0.0.1");
    REQUIRE(plain.has_value());
    CHECK(plain->accepted == std::vector<std::string>{blob(kKeyA)});
    auto port = agent::read_known_hosts(file, "[127.0.0.1]:2222");
    REQUIRE(port.has_value());
    CHECK(port->accepted == std::vector<std::string>{blob(kKeyB)});
    CHECK_FALSE(agent::read_known_hosts(file, "127.0.0.2").has_value());
  }

  TEST_CASE("A5: comma lists, wildcards and a negated name: a negated match refuses the line") {
    CHECK(agent::host_patterns_match("a.example,*.example.com,!bad.example.com", "good.example.com"));
    CHECK_FALSE(agent::host_patterns_match("a.example,*.example.com,!bad.example.com", "bad.example.com"));
    CHECK(agent::host_patterns_match("a.example,*.example.com", "a.example"));
    CHECK(agent::host_patterns_match("git?.example", "git1.example"));
    CHECK_FALSE(agent::host_patterns_match("git?.example", "git12.example"));
    CHECK(agent::host_patterns_match("GIT.Example", "git.example"));
    const std::string text = "*.example.com,!bad.example.com " + kKeyA + "\n";
    CHECK(known_host_keys(text, "kh", "good.example.com").has_value());
    CHECK_FALSE(known_host_keys(text, "kh", "bad.example.com").has_value());
  }

  TEST_CASE("A5: a @revoked key is never accepted, whatever line lists it, and ssh is told it is revoked") {
    const std::string text = "h.example " + kKeyA + "\nh.example " + kKeyB + "\n@revoked other.example " + kKeyA + "\n";
    auto keys = known_host_keys(text, "kh", "h.example");
    REQUIRE(keys.has_value());
    CHECK(keys->accepted == std::vector<std::string>{blob(kKeyB)});
    CHECK(keys->revoked == std::vector<std::string>{blob(kKeyA)});
    CHECK(agent::known_hosts_text(*keys) == "h.example " + kKeyB + "\n@revoked * " + kKeyA + "\n");
    // Only a revoked key left: no key for the host.
    CHECK_FALSE(known_host_keys("h.example " + kKeyA + "\n@revoked * " + kKeyA + "\n", "kh", "h.example").has_value());
  }

  TEST_CASE("A5: a @cert-authority line for the host is refused with words saying certificates are not accepted") {
    const std::string text = "h.example " + kKeyB + "\n@cert-authority *.example " + kKeyA + "\n";
    auto keys = known_host_keys(text, "/k", "h.example");
    REQUIRE_FALSE(keys.has_value());
    CHECK(keys.error().message.find("/k line 2") == 0);
    CHECK(keys.error().message.find("does not accept host certificates") != std::string::npos);
    // A CA line for other hosts is no concern of this one.
    CHECK(known_host_keys(text, "/k", "h.other").has_value() == false);
    CHECK(known_host_keys("h.other " + kKeyB + "\n@cert-authority *.example " + kKeyA + "\n", "/k", "h.other")
              .has_value());
  }

  TEST_CASE("A5: an ssh:// remote's user, host and port give the expected user and the name looked up") {
    auto t = agent::ssh_target("ssh://git@Example.com:2222/o/r.git");
    REQUIRE(t.has_value());
    CHECK(t->user == "git");
    CHECK(t->host == "example.com");  // the remote's canonical host
    CHECK(t->port == 2222);
    CHECK(host_key_alias(t->host, t->port) == "[example.com]:2222");
    auto v6 = agent::ssh_target("ssh://[::1]/~/r.git");
    REQUIRE(v6.has_value());
    CHECK(v6->user.empty());
    CHECK(v6->host == "::1");
    CHECK(host_key_alias(v6->host, v6->port) == "::1");
    CHECK_FALSE(agent::ssh_target("https://example.com/r.git").has_value());
    CHECK_FALSE(agent::ssh_target("ssh://h:99999/r").has_value());
    CHECK_FALSE(agent::ssh_target("ssh:///r").has_value());
  }

  TEST_CASE("A5: comments, blank lines, a key whose type does not match its bytes and malformed lines are skipped") {
    const std::string text =
        "# comment\n\nh.example ssh-rsa " + kKeyA.substr(12) + "\nh.example\nh.example " + kKeyB + " a comment\r\n";
    auto keys = known_host_keys(text, "kh", "h.example");
    REQUIRE(keys.has_value());
    CHECK(keys->accepted == std::vector<std::string>{blob(kKeyB)});
  }
}

}  // namespace unit_agent_known_hosts
