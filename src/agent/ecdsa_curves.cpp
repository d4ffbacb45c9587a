// ecdsa_curves.cpp — SSH's ECDSA curves over OpenSSL (ecdsa_curves.hpp).
#include "agent/ecdsa_curves.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>

namespace courier::agent {

namespace {

constexpr EcdsaCurve kCurves[] = {
    {"nistp256", "prime256v1", EVP_sha256},
    {"nistp384", "secp384r1", EVP_sha384},
    {"nistp521", "secp521r1", EVP_sha512},
};

struct BldFree {
  void operator()(OSSL_PARAM_BLD* b) const { OSSL_PARAM_BLD_free(b); }
};
struct ParamFree {
  void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct BnClearFree {
  void operator()(BIGNUM* b) const { BN_clear_free(b); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};

}  // namespace

const EcdsaCurve* ecdsa_curve(std::string_view ssh_name) {
  for (const auto& c : kCurves) {
    if (ssh_name == c.ssh_name) return &c;
  }
  return nullptr;
}

std::unique_ptr<EVP_PKEY, wire::PkeyFree> ecdsa_pkey(const EcdsaCurve& curve, std::string_view q, std::string_view d) {
  std::unique_ptr<OSSL_PARAM_BLD, BldFree> bld(OSSL_PARAM_BLD_new());
  std::unique_ptr<BIGNUM, BnClearFree> priv;
  if (!d.empty()) {
    priv.reset(BN_bin2bn(reinterpret_cast<const unsigned char*>(d.data()), static_cast<int>(d.size()), nullptr));
  }
  const bool built = bld && (d.empty() || priv) &&
                     OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, curve.group, 0) == 1 &&
                     OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, q.data(), q.size()) == 1 &&
                     (!priv || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, priv.get()) == 1);
  std::unique_ptr<OSSL_PARAM, ParamFree> params(built ? OSSL_PARAM_BLD_to_param(bld.get()) : nullptr);
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  EVP_PKEY* out = nullptr;
  const int selection = d.empty() ? EVP_PKEY_PUBLIC_KEY : EVP_PKEY_KEYPAIR;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &out, selection, params.get()) != 1) {
    wire::discard_openssl_errors();
    return nullptr;
  }
  std::unique_ptr<EVP_PKEY, wire::PkeyFree> key(out);
  // The point must be on the curve (and, for a private key, be d·G).
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> check(EVP_PKEY_CTX_new_from_pkey(nullptr, key.get(), nullptr));
  const int ok = !check ? 0 : d.empty() ? EVP_PKEY_public_check(check.get()) : EVP_PKEY_pairwise_check(check.get());
  if (ok != 1) {
    wire::discard_openssl_errors();
    return nullptr;
  }
  return key;
}

}  // namespace courier::agent
