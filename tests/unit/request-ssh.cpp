// request-ssh.cpp — the one request validation for ssh remotes (A5, H2): an
// ssh remote needs the request's SSH key and an http(s) one refuses it; the
// known-hosts file and the ssh program are absolute paths, the program an
// executable file; an ssh remote's user name is part of the remote, not a
// credential, so a caller that refuses user information keeps it.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "courier/courier.hpp"
#include "request/checked_parts.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_request_ssh {

using namespace courier;

namespace {

// A key that is only there: validation looks at its presence, nothing more.
class PresentKey : public SshKey {
 public:
  std::string algorithm() const override { return "ssh-ed25519"; }
  std::string public_blob() const override { return "blob"; }
  std::string public_line() const override { return "ssh-ed25519 AAAA"; }
  std::string fingerprint() const override { return "SHA256:x"; }
  Result<std::string> sign(std::string_view) const override { return fail(Errc::os_error, "not here"); }
};

DeliveryRequest request(const std::string& remote) {
  DeliveryRequest r;
  r.repo = "/srv/source";
  r.remote = remote;
  r.ref = "refs/heads/main";
  r.oid = std::string(40, 'a');
  return r;
}

// The one refusal of `r`, as field:code.
std::string refusal(const DeliveryRequest& r, const ValidateOptions& o = {}) {
  auto v = validate(r, o);
  if (v) return "accepted";
  std::string out;
  for (const auto& e : v.error()) out += (out.empty() ? "" : ", ") + e.field + ":" + e.code;
  return out;
}

std::string message(const DeliveryRequest& r) {
  auto v = validate(r);
  REQUIRE_FALSE(v.has_value());
  return v.error().front().message;
}

}  // namespace

TEST_SUITE("request-ssh") {
  TEST_CASE("A5: an ssh remote needs ssh_key; an https remote refuses one; the field is named") {
    auto ssh = request("git@git.example:org/r.git");
    CHECK(refusal(ssh) == "ssh_key:missing_field");
    CHECK(message(ssh).find("ssh://git@git.example/~/org/r.git") != std::string::npos);
    CHECK(message(ssh).find("--auth ssh-key:FILE") != std::string::npos);
    ssh.ssh_key = std::make_shared<PresentKey>();
    CHECK(refusal(ssh) == "accepted");
    auto checked = validate(ssh);
    REQUIRE(checked.has_value());
    CHECK(checked->remote() == "ssh://git@git.example/~/org/r.git");

    auto https = request("https://git.example/org/r.git");
    https.ssh_key = std::make_shared<PresentKey>();
    CHECK(refusal(https) == "ssh_key:bad_field");
    https.ssh_key.reset();
    CHECK(refusal(https) == "accepted");
  }

  TEST_CASE("A5: known_hosts and ssh_program must be absolute, ssh_program an executable file") {
    auto r = request("ssh://git@h/r.git");
    r.ssh_key = std::make_shared<PresentKey>();
    r.known_hosts = "known_hosts";
    CHECK(refusal(r) == "known_hosts:bad_field");
    r.known_hosts = "/etc/ssh/ssh_known_hosts";  // need not exist: ssh reads none then, and verifies nothing
    CHECK(refusal(r) == "accepted");
    r.ssh_program = "ssh";
    CHECK(refusal(r) == "ssh_program:bad_field");
    r.ssh_program = "/nonexistent/ssh";
    CHECK(refusal(r) == "ssh_program:bad_field");
    r.ssh_program = "/etc";
    CHECK(refusal(r) == "ssh_program:bad_field");
    r.ssh_program = "/etc/passwd";  // a file, not executable
    CHECK(refusal(r) == "ssh_program:bad_field");
    r.ssh_program = "/bin/sh";
    CHECK(refusal(r) == "accepted");
  }

  TEST_CASE("H2: an ssh remote's user is part of the remote, kept where user information is refused") {
    ValidateOptions o;
    o.refuse_user_in_remote = "name a credential instead";
    auto ssh = request("ssh://git@h/r.git");
    ssh.ssh_key = std::make_shared<PresentKey>();
    CHECK(refusal(ssh, o) == "accepted");
    CHECK(refusal(request("https://u@h/r.git"), o) == "remote:bad_remote");
    auto pw = request("ssh://git:pw@h/r.git");
    pw.ssh_key = std::make_shared<PresentKey>();
    CHECK(refusal(pw, o) == "remote:bad_remote");
  }

  TEST_CASE("A5: a request whose ssh fields change after validation is no longer the one judged") {
    auto r = request("ssh://git@h/r.git");
    r.ssh_key = std::make_shared<PresentKey>();
    auto checked = validate(r);
    REQUIRE(checked.has_value());
    CHECK(checked->parts() != nullptr);
    checked->request().ssh_key.reset();
    CHECK_FALSE(checked->parts()->still_describes(checked->request()));
  }
}

}  // namespace unit_request_ssh
