// ssh-child.cpp — rule T5 in the child: a delivery to an ssh:// remote goes
// over one ssh connection (OpenSSH's ssh, started by the child inside its
// kill domain) to a real sshd serving real bare repositories; git push over
// ssh to the same server is the comparison. The parent's agent is stood in
// for by OpenSSH's own ssh-agent holding the test key.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fixture_server.hpp"
#include "sshd_server.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_ssh_child {

using namespace courier;

namespace {

// A test key, a running sshd that accepts it, and known_hosts naming the
// server's host key under [127.0.0.1]:PORT.
struct SshSite {
  test::TempDir dir;
  std::string key;
  std::string known_hosts;
  test::SshdServer sshd;

  SshSite() : key(make_key(dir.path())), sshd(start(dir.path(), key)) {
    known_hosts = dir.path() + "/known_hosts";
    test::write_file(known_hosts, sshd.known_hosts_line() + "\n");
  }

  static std::string make_key(const std::string& dir) {
    const std::string key = dir + "/key";
    auto r = test::run({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", key});
    if (r.exit_code != 0) throw std::runtime_error("ssh-keygen: " + r.err);
    return key;
  }

  static test::SshdServer start(const std::string& dir, const std::string& key) {
    return test::SshdServer::start(dir + "/sshd", {test::read_file(key + ".pub")});
  }

  // A bare repository on the server's side.
  std::string bare(const std::string& name) {
    const std::string path = dir.path() + "/" + name + ".git";
    test::git_ok({"init", "-q", "--bare", "-b", "main", path});
    return path;
  }

  // git's own ssh, with the same key and known hosts as the child's.
  std::vector<std::string> git_ssh_env() const {
    return {"GIT_SSH_COMMAND=/usr/bin/ssh -F /dev/null -o IdentitiesOnly=yes -o IdentityFile=" + key +
            " -o UserKnownHostsFile=" + known_hosts + " -o StrictHostKeyChecking=yes -o BatchMode=yes"};
  }
};

}  // namespace

TEST_SUITE("ssh-child") {
  TEST_CASE("T5: the test sshd serves git push over ssh to a bare repository") {
    SshSite site;
    const std::string src = site.dir.path() + "/src";
    const std::string tip = test::make_source_repo(src, 2);
    const std::string repo = site.bare("r");
    auto pushed = test::git({"push", site.sshd.url(repo), "main:refs/heads/main"}, src, site.git_ssh_env());
    REQUIRE_MESSAGE(pushed.ok(), pushed.err, site.sshd.log());
    CHECK(test::git_ok({"--git-dir", repo, "rev-parse", "refs/heads/main"}) == tip);
    CHECK(site.sshd.log().find("Accepted publickey for " + site.sshd.user()) != std::string::npos);
  }
}

}  // namespace integration_ssh_child
