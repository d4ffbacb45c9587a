// ed25519_minter.hpp — the `key:FILE` minter: one short-lived token per leg,
// signed with an Ed25519 key that never leaves the parent (rule A1), bound
// to the leg's method and exact URL, the delivery's ref and object, and the
// POST body's hash, and expiring no later than the deadline (A2).
//
// A token is a compact JWS (RFC 7515) with header
//   {"alg":"EdDSA","kid":<JWK thumbprint>,"typ":"git-courier+jwt"}
// and claims iss, aud, htm, htu, iat, exp, jti, ref, oid, for the POST ph,
// and, for a delivery under a lane lease, fence. docs/auth.md defines every
// field and how a server verifies it.
#pragma once

#include <openssl/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "auth/minter.hpp"
#include "courier/result.hpp"

namespace courier::auth {

inline constexpr std::string_view kTokenAlg = "EdDSA";
inline constexpr std::string_view kTokenType = "git-courier+jwt";
inline constexpr std::size_t kJtiBytes = 16;  // 128 bits
inline constexpr std::size_t kEd25519KeyBytes = 32;

// RFC 7638 thumbprint of an Ed25519 public key (32 raw bytes): base64url of
// SHA-256 over {"crv":"Ed25519","kty":"OKP","x":"<base64url key>"}.
std::string jwk_thumbprint(std::string_view public_raw);

// An Ed25519 private key held in this process.
class Ed25519Key {
 public:
  // Reads a PEM private key (PKCS#8, unencrypted). Errors: invalid_argument
  // naming the problem — the file is missing or unreadable, it is not a PEM
  // private key, it is encrypted, it is a public key, or the key is not
  // Ed25519 (the type found is named).
  static Result<Ed25519Key> load(const std::string& path);
  // The same from PEM text; `what` names its origin in errors.
  static Result<Ed25519Key> from_pem(std::string_view pem, const std::string& what);

  const std::string& public_raw() const { return public_raw_; }  // 32 bytes
  std::string public_b64url() const;
  const std::string& thumbprint() const { return thumbprint_; }  // the tokens' kid

  // Pure EdDSA over message: 64 bytes. Errors: os_error (OpenSSL).
  Result<std::string> sign(std::string_view message) const;

 private:
  std::shared_ptr<EVP_PKEY> pkey_;
  std::string public_raw_;
  std::string thumbprint_;
};

struct GeneratedKey {
  std::string public_key;  // base64url of the 32 raw bytes
  std::string thumbprint;  // the kid its tokens will carry
};

// Writes a new Ed25519 private key (PKCS#8 PEM) to `path` with mode 0600.
// Never overwrites: an existing path is an error, also when it appears
// while the key is being written. Errors: invalid_argument (exists), os_error.
Result<GeneratedKey> keygen(const std::string& path);

class Ed25519Minter : public Minter {
 public:
  // wall_clock: Unix time in nanoseconds; default the system clock. The
  // deadline (monotonic) is converted through it.
  explicit Ed25519Minter(std::shared_ptr<const Ed25519Key> key, std::function<std::int64_t()> wall_clock = {});

  // The compact JWS for one leg. Errors: invalid_argument (a request the
  // token cannot describe: no body hash for a POST, a ttl <= 0, a deadline
  // already passed, a ref or oid that is not UTF-8), os_error (OpenSSL).
  Result<std::string> token(const LegRequest& request) const;
  // "Authorization: Bearer " + token(request).
  Result<std::string> mint(const LegRequest& request) override;

 private:
  std::shared_ptr<const Ed25519Key> key_;
  std::function<std::int64_t()> wall_clock_;
};

}  // namespace courier::auth
