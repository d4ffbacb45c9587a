// auth_support.hpp — helpers shared by the auth suites: keys in
// temporary directories, mint contexts and requests, token parts.
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "auth/credential_minter.hpp"
#include "auth/crypto.hpp"
#include "auth/ed25519_minter.hpp"
#include "auth/minter.hpp"
#include "protocol/messages.hpp"
#include "support.hpp"
#include "sys/clock.hpp"

namespace courier::test::auth_support {

inline const std::string kRemote = "https://127.0.0.1:8443/team/r.git";
inline const std::string kAdvertisementUrl = kRemote + "/info/refs?service=git-receive-pack";
inline const std::string kReceivePackUrl = kRemote + "/git-receive-pack";
inline const std::string kRef = "refs/heads/main";
inline const std::string kOid = "0123456789abcdef0123456789abcdef01234567";

inline courier::auth::MintContext context(sys::MonoNs budget_ms = 60'000, const std::string& remote = kRemote) {
  courier::auth::MintContext c;
  c.remote = remote;
  c.ref = kRef;
  c.oid = kOid;
  c.deadline = sys::mono_now_ns() + budget_ms * sys::kNsPerMs;
  return c;
}

inline courier::auth::LegRequest get_leg(const courier::auth::MintContext& c,
                                         const std::string& url = kAdvertisementUrl) {
  return courier::auth::LegRequest{c, std::string(protocol::kLegAdvertisement), "GET", url, std::nullopt};
}

inline std::string body_hex(const std::string& body) { return courier::auth::to_hex(courier::auth::sha256(body)); }

inline courier::auth::LegRequest post_leg(const courier::auth::MintContext& c, const std::string& body,
                                          const std::string& url = kReceivePackUrl) {
  return courier::auth::LegRequest{c, std::string(protocol::kLegReceivePack), "POST", url, body_hex(body)};
}

inline MintRequest mint_get(const std::string& url = kAdvertisementUrl) {
  return MintRequest{std::string(protocol::kLegAdvertisement), "GET", url, std::nullopt, std::nullopt};
}

inline MintRequest mint_post(const std::string& url = kReceivePackUrl,
                             std::optional<std::string> hash = std::string(64, 'a')) {
  return MintRequest{std::string(protocol::kLegReceivePack), "POST", url, std::move(hash), 1234};
}

// A fresh key in its own temporary directory.
struct TestKey {
  TempDir dir;
  std::string path = dir.path() + "/key.pem";
  courier::auth::GeneratedKey generated;
  std::shared_ptr<const courier::auth::Ed25519Key> key;

  TestKey() {
    auto g = courier::auth::keygen(path);
    if (!g) throw std::runtime_error("keygen: " + g.error().message);
    generated = *g;
    auto k = courier::auth::Ed25519Key::load(path);
    if (!k) throw std::runtime_error("load: " + k.error().message);
    key = std::make_shared<const courier::auth::Ed25519Key>(std::move(*k));
  }
};

// A key: minter (its tokens bind the POST's body) for a delivery to
// `remote` whose claims name `ref` and `oid`, signing with `key`.
inline MintFn key_mint(const TestKey& key, const std::string& remote, const std::string& ref, const std::string& oid,
                       sys::MonoNs budget_ms = 30'000) {
  courier::auth::MintContext ctx = context(budget_ms, remote);
  ctx.ref = ref;
  ctx.oid = oid;
  return courier::auth::make_mint_callback(std::make_shared<courier::auth::Ed25519Minter>(key.key), ctx, nullptr);
}

struct TokenParts {
  nlohmann::json header;
  nlohmann::json claims;
  std::string signature;  // raw bytes
};

inline TokenParts split_token(const std::string& token) {
  const auto d1 = token.find('.');
  const auto d2 = token.find('.', d1 + 1);
  auto part = [](const std::string& s) { return nlohmann::json::parse(courier::auth::base64url_decode(s).value()); };
  return TokenParts{part(token.substr(0, d1)), part(token.substr(d1 + 1, d2 - d1 - 1)),
                    courier::auth::base64url_decode(token.substr(d2 + 1)).value()};
}

// A token with any header and claims, signed by `key` (for refusals the
// minter would never produce).
inline std::string sign_token(const courier::auth::Ed25519Key& key, const nlohmann::json& header,
                              const nlohmann::json& claims) {
  const std::string input =
      courier::auth::base64url_encode(header.dump()) + "." + courier::auth::base64url_encode(claims.dump());
  return input + "." + courier::auth::base64url_encode(key.sign(input).value());
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A throwaway git configuration whose only setting is a credential helper:
// a shell script that logs every call (action and input) to a file and
// answers "get" according to its mode.
struct HelperSetup {
  test::TempDir dir;
  std::string log = dir.path() + "/helper.log";
  std::string pid_file = dir.path() + "/helper.pid";
  std::string fifo = dir.path() + "/never";
  std::vector<std::string> env;

  // mode: "answer" (username/password), "silent" (nothing), "wedge" (blocks
  // reading a FIFO nobody writes), "colon" (a user name with ':').
  explicit HelperSetup(const std::string& mode = "answer") {
    const std::string script = dir.path() + "/helper.sh";
    write_file(script,
               "#!/bin/sh\n"
               "input=$(cat)\n"
               "printf 'action=%s\\n%s\\n--\\n' \"$1\" \"$input\" >> '" +
                   log +
                   "'\n"
                   "[ \"$1\" = get ] || exit 0\n"
                   "case '" +
                   mode +
                   "' in\n"
                   "  answer) printf 'username=alice\\npassword=s3cret pass=word\\n' ;;\n"
                   "  colon) printf 'username=al:ice\\npassword=x\\n' ;;\n"
                   "  wedge) echo $$ > '" +
                   pid_file + "'; read x < '" + fifo +
                   "' ;;\n"
                   "esac\n");
    ::chmod(script.c_str(), 0700);
    if (mode == "wedge") REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    write_file(dir.path() + "/gitconfig", "[credential]\n\thelper = " + script + "\n");
    env = {"PATH=/usr/bin:/bin",    "HOME=" + dir.path(),
           "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + dir.path() + "/gitconfig",
           "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"};
  }

  courier::auth::CredentialMinterOptions options() const {
    courier::auth::CredentialMinterOptions o;
    o.env = env;
    return o;
  }
};

inline std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace courier::test::auth_support
