// ssh_keys.cpp — SSH private keys over OpenSSL (ssh_keys.hpp): building
// the key from its file's fields, and signing.
#include "agent/ssh_keys.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "agent/ecdsa_curves.hpp"
#include "agent/ssh_text.hpp"
#include "agent/ssh_wire.hpp"
#include "wire/digest.hpp"

namespace courier::agent {

namespace {

using Pkey = std::unique_ptr<EVP_PKEY, wire::PkeyFree>;

class OpenSslKey final : public SshKey {
 public:
  OpenSslKey(Pkey pkey, std::string blob, const EVP_MD* md) : pkey_(std::move(pkey)), blob_(std::move(blob)), md_(md) {}
  std::string algorithm() const override { return blob_algorithm(blob_); }
  std::string public_blob() const override { return blob_; }
  std::string public_line() const override { return public_line_of(blob_); }
  std::string fingerprint() const override { return fingerprint_of(blob_); }
  Result<std::string> sign(std::string_view data) const override;

 private:
  Result<std::string> raw_signature(std::string_view data) const;
  Pkey pkey_;
  std::string blob_;
  const EVP_MD* md_;  // null for Ed25519 (it hashes by itself)
};

Result<std::string> OpenSslKey::raw_signature(std::string_view data) const {
  std::unique_ptr<EVP_MD_CTX, wire::MdCtxFree> ctx(EVP_MD_CTX_new());
  std::size_t len = 0;
  const auto* in = reinterpret_cast<const unsigned char*>(data.data());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, md_, nullptr, pkey_.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, in, data.size()) != 1) {
    return tl::unexpected(wire::openssl_error("ssh key: signing"));
  }
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, in, data.size()) != 1) {
    return tl::unexpected(wire::openssl_error("ssh key: signing"));
  }
  sig.resize(len);
  return sig;
}

// ECDSA: OpenSSL's DER (r, s) as SSH's string of mpint r, mpint s.
std::optional<std::string> ecdsa_der_to_ssh(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
  if (!sig) return std::nullopt;
  const BIGNUM* r = nullptr;
  const BIGNUM* s = nullptr;
  ECDSA_SIG_get0(sig, &r, &s);
  auto bytes = [](const BIGNUM* n) {
    std::string b(static_cast<std::size_t>(BN_num_bytes(n)), '\0');
    BN_bn2bin(n, reinterpret_cast<unsigned char*>(b.data()));
    return b;
  };
  std::string out;
  put_mpint(out, bytes(r));
  put_mpint(out, bytes(s));
  ECDSA_SIG_free(sig);
  return out;
}

Result<std::string> OpenSslKey::sign(std::string_view data) const {
  auto raw = raw_signature(data);
  if (!raw) return raw;
  std::string inner = std::move(*raw);
  if (md_ != nullptr) {
    auto ssh = ecdsa_der_to_ssh(inner);
    if (!ssh) return fail(Errc::os_error, "ssh key: the ECDSA signature could not be read back");
    inner = std::move(*ssh);
  }
  std::string blob;
  put_string(blob, algorithm());
  put_string(blob, inner);
  return blob;
}

Error bad_key(const std::string& what) { return Error{Errc::invalid_argument, "not a valid " + what + " key"}; }

}  // namespace

Result<std::shared_ptr<const SshKey>> make_ed25519_key(std::string_view pub, std::string_view priv) {
  if (pub.size() != 32 || priv.size() != 64 || priv.substr(32) != pub) return tl::unexpected(bad_key("Ed25519"));
  Pkey pkey(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(priv.data()), 32));
  if (!pkey) return tl::unexpected(wire::openssl_error("ssh key: Ed25519"));
  std::string derived(32, '\0');
  std::size_t len = derived.size();
  if (EVP_PKEY_get_raw_public_key(pkey.get(), reinterpret_cast<unsigned char*>(derived.data()), &len) != 1 ||
      derived != pub) {
    wire::discard_openssl_errors();
    return tl::unexpected(bad_key("Ed25519"));
  }
  std::string blob;
  put_string(blob, "ssh-ed25519");
  put_string(blob, pub);
  return std::make_shared<OpenSslKey>(std::move(pkey), std::move(blob), nullptr);
}

Result<std::shared_ptr<const SshKey>> make_ecdsa_key(std::string_view curve, std::string_view q, std::string_view d) {
  const EcdsaCurve* c = ecdsa_curve(curve);
  if (!c) return fail(Errc::invalid_argument, "an ECDSA key on an unsupported curve");
  auto pkey = ecdsa_pkey(*c, q, d);
  if (!pkey) return tl::unexpected(bad_key("ECDSA"));
  std::string blob;
  put_string(blob, std::string("ecdsa-sha2-") + c->ssh_name);
  put_string(blob, c->ssh_name);
  put_string(blob, q);
  return std::make_shared<OpenSslKey>(std::move(pkey), std::move(blob), c->md());
}

}  // namespace courier::agent
