// ssh_verify.cpp — the check of an SSH signature by a public key blob
// (ssh_keys.hpp): what the agent asks of a session binding, whose
// signature the server's host key made over the session identifier.
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/param_build.h>

#include "agent/ecdsa_curves.hpp"
#include "agent/ssh_keys.hpp"
#include "agent/ssh_wire.hpp"

namespace courier::agent {

namespace {

using Pkey = std::unique_ptr<EVP_PKEY, wire::PkeyFree>;

struct Checked {
  Pkey key;
  const EVP_MD* md = nullptr;
  bool ecdsa = false;
};

Pkey rsa_pkey(std::string_view e, std::string_view n) {
  BIGNUM* bn_e = BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()), static_cast<int>(e.size()), nullptr);
  BIGNUM* bn_n = BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()), static_cast<int>(n.size()), nullptr);
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM* params = nullptr;
  if (bn_e && bn_n && bld && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) == 1 &&
      OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) == 1) {
    params = OSSL_PARAM_BLD_to_param(bld);
  }
  EVP_PKEY* out = nullptr;
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr);
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx) != 1 ||
      EVP_PKEY_fromdata(ctx, &out, EVP_PKEY_PUBLIC_KEY, params) != 1) {
    out = nullptr;
  }
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(bld);
  BN_free(bn_e);
  BN_free(bn_n);
  return Pkey(out);
}

// The key of `key_blob`, fit for a signature named `sig_alg`; null key when
// the two do not fit or the key is not one this program checks.
Checked checked_key(std::string_view key_blob, std::string_view sig_alg) {
  SshReader r(key_blob);
  auto alg = r.string();
  Checked c;
  if (!alg) return c;
  if (*alg == "ssh-ed25519" && sig_alg == *alg) {
    auto pub = r.string();
    if (pub && pub->size() == 32 && r.empty()) {
      c.key.reset(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                              reinterpret_cast<const unsigned char*>(pub->data()), 32));
    }
  } else if (alg->substr(0, 11) == "ecdsa-sha2-" && sig_alg == *alg) {
    auto curve_name = r.string();
    auto q = r.string();
    const EcdsaCurve* curve = curve_name ? ecdsa_curve(*curve_name) : nullptr;
    if (curve && q && r.empty() && alg->substr(11) == *curve_name) {
      c.key = ecdsa_pkey(*curve, *q, {});
      c.md = curve->md();
      c.ecdsa = true;
    }
  } else if (*alg == "ssh-rsa" && (sig_alg == "rsa-sha2-256" || sig_alg == "rsa-sha2-512")) {
    auto e = r.mpint();
    auto n = r.mpint();
    if (e && n && r.empty() && n->size() * 8 >= 2048) c.key = rsa_pkey(*e, *n);
    c.md = sig_alg == "rsa-sha2-256" ? EVP_sha256() : EVP_sha512();
  }
  return c;
}

// SSH's (mpint r, mpint s) as the DER OpenSSL checks.
std::optional<std::string> ecdsa_ssh_to_der(std::string_view inner) {
  SshReader r(inner);
  auto rv = r.mpint();
  auto sv = r.mpint();
  if (!rv || !sv || !r.empty()) return std::nullopt;
  ECDSA_SIG* sig = ECDSA_SIG_new();
  BIGNUM* bn_r = BN_bin2bn(reinterpret_cast<const unsigned char*>(rv->data()), static_cast<int>(rv->size()), nullptr);
  BIGNUM* bn_s = BN_bin2bn(reinterpret_cast<const unsigned char*>(sv->data()), static_cast<int>(sv->size()), nullptr);
  if (!sig || !bn_r || !bn_s || ECDSA_SIG_set0(sig, bn_r, bn_s) != 1) {
    BN_free(bn_r);
    BN_free(bn_s);
    ECDSA_SIG_free(sig);
    return std::nullopt;
  }
  unsigned char* der = nullptr;
  const int len = i2d_ECDSA_SIG(sig, &der);
  ECDSA_SIG_free(sig);
  if (len <= 0) return std::nullopt;
  std::string out(reinterpret_cast<const char*>(der), static_cast<std::size_t>(len));
  OPENSSL_free(der);
  return out;
}

}  // namespace

bool verify_ssh_signature(std::string_view key_blob, std::string_view signature, std::string_view data) {
  SshReader r(signature);
  auto sig_alg = r.string();
  auto inner = r.string();
  if (!sig_alg || !inner || !r.empty()) return false;
  Checked c = checked_key(key_blob, *sig_alg);
  if (!c.key) {
    wire::discard_openssl_errors();
    return false;
  }
  std::string bytes(*inner);
  if (c.ecdsa) {
    auto der = ecdsa_ssh_to_der(*inner);
    if (!der) return false;
    bytes = std::move(*der);
  }
  std::unique_ptr<EVP_MD_CTX, wire::MdCtxFree> ctx(EVP_MD_CTX_new());
  const bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, c.md, nullptr, c.key.get()) == 1 &&
                  EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                                   reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1;
  wire::discard_openssl_errors();
  return ok;
}

}  // namespace courier::agent
