// agent-key.cpp — the parent's SSH key loading (load_ssh_key): keys made
// by ssh-keygen in the test's own directory (Ed25519, ECDSA on the three
// NIST curves, one protected by a passphrase), what each signs verified
// with OpenSSL, and the files ssh itself would refuse.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "agent/blowfish.hpp"
#include "agent/ssh_keys.hpp"
#include "agent/ssh_wire.hpp"
#include "courier/ssh_key.hpp"
#include "support.hpp"
#include "wire/hex.hpp"

namespace unit_agent_key {

using namespace courier;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "type base64" of a .pub file (without its comment).
std::string public_line(const std::string& pub_path) {
  std::istringstream in(slurp(pub_path));
  std::string type, b64;
  in >> type >> b64;
  return type + " " + b64;
}

// ssh-keygen in `dir`: the private key's path.
std::string keygen(const test::TempDir& dir, const std::string& name, const std::vector<std::string>& type,
                   const std::string& passphrase = "") {
  const std::string path = dir.path() + "/" + name;
  std::vector<std::string> argv = {"/usr/bin/ssh-keygen", "-q"};
  argv.insert(argv.end(), type.begin(), type.end());
  argv.insert(argv.end(), {"-N", passphrase, "-C", "test", "-f", path});
  const auto r = test::run(argv);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return path;
}

SshPassphraseFn phrase(const std::string& p) {
  return [p]() -> Result<std::string> { return p; };
}

// The key signs, and its signature verifies under its public blob.
void check_signs(const SshKey& key) {
  const std::string data = "data to sign, as ssh would give it";
  auto sig = key.sign(data);
  REQUIRE(sig.has_value());
  agent::SshReader r(*sig);
  auto alg = r.string();
  REQUIRE(alg.has_value());
  CHECK(std::string(*alg) == key.algorithm());
  CHECK(agent::verify_ssh_signature(key.public_blob(), *sig, data));
  CHECK_FALSE(agent::verify_ssh_signature(key.public_blob(), *sig, data + "!"));
}

}  // namespace

TEST_SUITE("agent-key") {
  TEST_CASE("A5: an Ed25519 key from ssh-keygen loads with its public line and fingerprint, and signs") {
    test::TempDir dir;
    const std::string path = keygen(dir, "id_ed25519", {"-t", "ed25519"});
    auto key = load_ssh_key(path);
    REQUIRE_MESSAGE(key.has_value(), key.error().message);
    CHECK((*key)->algorithm() == "ssh-ed25519");
    CHECK((*key)->public_line() == public_line(path + ".pub"));
    const auto fp = test::run({"/usr/bin/ssh-keygen", "-l", "-f", path + ".pub"});
    CHECK(fp.out.find((*key)->fingerprint()) != std::string::npos);
    check_signs(**key);
  }

  TEST_CASE("A5: ECDSA keys on nistp256, nistp384 and nistp521 load and sign with SSH's (r, s) signature") {
    test::TempDir dir;
    for (const char* bits : {"256", "384", "521"}) {
      const std::string path = keygen(dir, std::string("id_ecdsa") + bits, {"-t", "ecdsa", "-b", bits});
      auto key = load_ssh_key(path);
      REQUIRE_MESSAGE(key.has_value(), key.error().message);
      CHECK((*key)->algorithm() == std::string("ecdsa-sha2-nistp") + bits);
      CHECK((*key)->public_line() == public_line(path + ".pub"));
      check_signs(**key);
    }
  }

  TEST_CASE("A5: a passphrase-protected key opens with its passphrase only, and never without one") {
    test::TempDir dir;
    const std::string path = keygen(dir, "id_locked", {"-t", "ed25519"}, "correct horse");
    auto key = load_ssh_key(path, phrase("correct horse"));
    REQUIRE_MESSAGE(key.has_value(), key.error().message);
    CHECK((*key)->public_line() == public_line(path + ".pub"));
    check_signs(**key);
    auto wrong = load_ssh_key(path, phrase("battery staple"));
    REQUIRE_FALSE(wrong.has_value());
    CHECK(wrong.error().message.find("passphrase is wrong") != std::string::npos);
    CHECK(wrong.error().message.find("battery") == std::string::npos);
    auto none = load_ssh_key(path);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().message.find("protected by a passphrase") != std::string::npos);
    // ECDSA with ssh-keygen's default cipher too.
    const std::string ec = keygen(dir, "id_locked_ec", {"-t", "ecdsa"}, "pw");
    auto ec_key = load_ssh_key(ec, phrase("pw"));
    REQUIRE_MESSAGE(ec_key.has_value(), ec_key.error().message);
    CHECK((*ec_key)->public_line() == public_line(ec + ".pub"));
  }

  TEST_CASE("A5: a key file other users may read, a symbolic link or a directory is refused as ssh refuses it") {
    test::TempDir dir;
    const std::string path = keygen(dir, "id_open", {"-t", "ed25519"});
    REQUIRE(::chmod(path.c_str(), 0644) == 0);
    auto open = load_ssh_key(path);
    REQUIRE_FALSE(open.has_value());
    CHECK(open.error().message.find("0644") != std::string::npos);
    CHECK(open.error().message.find("chmod 600") != std::string::npos);
    REQUIRE(::chmod(path.c_str(), 0640) == 0);
    CHECK_FALSE(load_ssh_key(path).has_value());
    REQUIRE(::chmod(path.c_str(), 0600) == 0);
    CHECK(load_ssh_key(path).has_value());
    const std::string link = dir.path() + "/link";
    REQUIRE(::symlink(path.c_str(), link.c_str()) == 0);
    CHECK_FALSE(load_ssh_key(link).has_value());
    CHECK_FALSE(load_ssh_key(dir.path()).has_value());
    CHECK_FALSE(load_ssh_key(path + ".pub").has_value());  // a public key is not a private one
  }

  TEST_CASE("bcrypt_pbkdf gives OpenBSD's published answer") {
    // OpenBSD regress/lib/libutil/bcrypt_pbkdf: "password", "salt", 4
    // rounds, 32 bytes.
    auto k = agent::bcrypt_pbkdf("password", "salt", 32, 4);
    REQUIRE(k.has_value());
    CHECK(wire::to_hex(*k) == "5bbf0cc293587f1c3635555c27796598d47e579071bf427e9d8fbe842aba34d9");
  }
}

}  // namespace unit_agent_key
