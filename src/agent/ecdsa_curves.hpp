// ecdsa_curves.hpp — the ECDSA curves SSH names (RFC 5656): nistp256,
// nistp384, nistp521, their OpenSSL groups and hashes, and an OpenSSL key
// made from a curve's point (and scalar, for a private key).
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string_view>

#include "wire/digest.hpp"

namespace courier::agent {

struct EcdsaCurve {
  const char* ssh_name;  // "nistp256"
  const char* group;     // OpenSSL's group name
  const EVP_MD* (*md)();
};

// Null when SSH names no such curve.
const EcdsaCurve* ecdsa_curve(std::string_view ssh_name);

// The key on `curve` whose public point is `q` (uncompressed); with `d`
// non-empty, the private key too. Null when OpenSSL refuses them.
std::unique_ptr<EVP_PKEY, wire::PkeyFree> ecdsa_pkey(const EcdsaCurve& curve, std::string_view q, std::string_view d);

}  // namespace courier::agent
