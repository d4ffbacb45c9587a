// child-ssh.cpp — how the delivery child runs ssh (A5, T5): the argv with
// the product's options first, the remote's path quoted as git quotes it,
// no SSH_* variable in ssh's environment, and ssh's stderr read after a
// failure (the host key's fingerprint, the status).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "child/ssh_argv.hpp"
#include "child/ssh_stderr.hpp"
#include "transport/advertisement.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_child_ssh {

using namespace courier;
using namespace courier::child;

namespace {

protocol::SshJob ssh_job() {
  return protocol::SshJob{"/usr/bin/ssh", "/run/d/agent", "/run/d/known_hosts", "/run/d/id.pub", "[git.example]:2222"};
}

std::size_t index_of(const std::vector<std::string>& v, const std::string& s) {
  return static_cast<std::size_t>(std::find(v.begin(), v.end(), s) - v.begin());
}

}  // namespace

TEST_SUITE("child") {
  TEST_CASE("A5: ssh runs by absolute path with the product's options first, then port, user, host and one command") {
    auto t = parse_ssh_target("ssh://deploy@git.example:2222/srv/it's!.git");
    REQUIRE(t.has_value());
    const auto argv = ssh_argv(ssh_job(), *t, sys::mono_now_ns() + 30'500 * sys::kNsPerMs);
    REQUIRE(argv.size() > 8);
    CHECK(argv.front() == "/usr/bin/ssh");
    for (const char* o :
         {"StrictHostKeyChecking=yes", "UserKnownHostsFile=/run/d/known_hosts", "UpdateHostKeys=no",
          "IdentitiesOnly=yes", "IdentityFile=/run/d/id.pub", "IdentityAgent=/run/d/agent", "ControlMaster=no",
          "ControlPath=none", "BatchMode=yes", "HostKeyAlias=[git.example]:2222", "ConnectTimeout=30"}) {
      const std::size_t at = index_of(argv, o);
      REQUIRE_MESSAGE(at < argv.size(), o);
      CHECK(argv[at - 1] == "-o");
      CHECK(at < index_of(argv, "--"));
    }
    CHECK(argv[index_of(argv, "-p") + 1] == "2222");
    CHECK(argv[index_of(argv, "-l") + 1] == "deploy");
    const std::vector<std::string> tail(argv.end() - 3, argv.end());
    CHECK(tail == std::vector<std::string>{"--", "git.example", "git-receive-pack '/srv/it'\\''s'\\!'.git'"});
  }

  TEST_CASE(
      "T5: a home-relative ssh path reaches git-receive-pack relative, as git sends an scp-like path, and no port or "
      "user is given when none is") {
    auto t = parse_ssh_target("ssh://git.example/~/repo.git");
    REQUIRE(t.has_value());
    CHECK(t->path == "repo.git");
    const auto argv = ssh_argv(ssh_job(), *t, sys::mono_now_ns());
    CHECK(index_of(argv, "-p") == argv.size());
    CHECK(index_of(argv, "-l") == argv.size());
    CHECK(argv.back() == "git-receive-pack 'repo.git'");
    CHECK(index_of(argv, "ConnectTimeout=1") < argv.size());
    CHECK_FALSE(parse_ssh_target("https://git.example/r.git").has_value());
    CHECK_FALSE(parse_ssh_target("ssh://u:pw@git.example/r.git").has_value());
  }

  TEST_CASE("T5: ssh's stderr names the host key it was shown, and the failure's status") {
    const std::string shown = "debug1: Server host key: ssh-ed25519 SHA256:AbC123\n";
    auto unknown = classify_ssh_failure(
        "OpenSSH_9.2p1\n" + shown +
            "No ED25519 host key is known for [h]:22 and you have requested strict checking.\nHost key verification "
            "failed.\n",
        "[h]:22", "reading the ref advertisement");
    CHECK(unknown.status == wire::DeliveryStatus::transport_failed);
    CHECK(unknown.reason.find("ssh-ed25519 SHA256:AbC123") != std::string::npos);
    CHECK(unknown.reason.find("not known") != std::string::npos);
    auto changed = classify_ssh_failure(shown + "@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n",
                                        "[h]:22", "x");
    CHECK(changed.reason.find("changed") != std::string::npos);
    CHECK(changed.reason.find("SHA256:AbC123") != std::string::npos);
    auto denied = classify_ssh_failure(shown + "git@h: Permission denied (publickey).\n", "[h]:22", "x");
    CHECK(denied.status == wire::DeliveryStatus::auth_failed);
    auto refused = classify_ssh_failure("ssh: connect to host h port 22: Connection refused\n", "h", "x");
    CHECK(refused.status == wire::DeliveryStatus::transport_failed);
    CHECK(refused.reason.find("Connection refused") != std::string::npos);
    CHECK(refused.reason.find("debug1") == std::string::npos);
  }

  TEST_CASE("T5: the advertisement over ssh has no service line and parses as over HTTP") {
    const std::string oid(40, 'a');
    const std::string line = oid + " refs/heads/main" + std::string(1, '\0') + "report-status delete-refs\n";
    char len[5];
    std::snprintf(len, sizeof len, "%04zx", line.size() + 4);
    const std::string body = std::string(len) + line + "0000";
    auto adv = transport::parse_advertisement(body, transport::AdvertisementForm::ssh);
    REQUIRE_MESSAGE(adv.has_value(), adv.error().message);
    CHECK(adv->oid_of("refs/heads/main") == oid);
    CHECK(adv->capabilities.has("delete-refs"));
    CHECK_FALSE(transport::parse_advertisement(body).has_value());  // HTTP's form wants the service line
  }
}

}  // namespace unit_child_ssh
