// openssh_key_file.cpp — ssh-keygen's private key file
// (openssh_key_file.hpp).
#include "agent/openssh_key_file.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "agent/blowfish.hpp"
#include "agent/ssh_keys.hpp"
#include "agent/ssh_text.hpp"
#include "agent/ssh_wire.hpp"

namespace courier::agent {

namespace {

constexpr std::string_view kBegin = "-----BEGIN OPENSSH PRIVATE KEY-----";
constexpr std::string_view kEnd = "-----END OPENSSH PRIVATE KEY-----";
constexpr std::string_view kMagic = std::string_view("openssh-key-v1\0", 15);
// bcrypt_pbkdf rounds above this are refused: ssh-keygen writes 16 (-a
// raises it); a file asking for millions would hold the host for hours.
constexpr std::uint32_t kMaxRounds = 1024;

// Wiped when it goes: the decrypted section, the derived key.
struct Secret {
  std::string bytes;
  ~Secret() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

Error refused(const std::string& why) { return Error{Errc::invalid_argument, why}; }

Result<std::string> dearmour(std::string_view text) {
  const auto b = text.find(kBegin);
  const auto e = text.find(kEnd);
  if (b == std::string_view::npos || e == std::string_view::npos || e < b) {
    return tl::unexpected(refused(
        "not an OpenSSH private key (ssh-keygen's format, \"BEGIN OPENSSH PRIVATE KEY\"); convert a PEM key with "
        "ssh-keygen -p -f FILE"));
  }
  std::string b64;
  for (char c : text.substr(b + kBegin.size(), e - b - kBegin.size())) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') b64.push_back(c);
  }
  auto raw = base64_decode(b64);
  OPENSSL_cleanse(b64.data(), b64.size());
  if (!raw || raw->substr(0, kMagic.size()) != kMagic) return tl::unexpected(refused("a damaged OpenSSH private key"));
  return raw->substr(kMagic.size());
}

const EVP_CIPHER* cipher_named(std::string_view name) {
  if (name == "aes128-ctr") return EVP_aes_128_ctr();
  if (name == "aes192-ctr") return EVP_aes_192_ctr();
  if (name == "aes256-ctr") return EVP_aes_256_ctr();
  if (name == "aes128-cbc") return EVP_aes_128_cbc();
  if (name == "aes192-cbc") return EVP_aes_192_cbc();
  if (name == "aes256-cbc") return EVP_aes_256_cbc();
  return nullptr;
}

struct CipherCtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};

Result<void> decrypt(const EVP_CIPHER* cipher, std::string_view key_iv, std::string& data) {
  const auto key_len = static_cast<std::size_t>(EVP_CIPHER_get_key_length(cipher));
  std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree> ctx(EVP_CIPHER_CTX_new());
  int out_len = 0;
  const auto* k = reinterpret_cast<const unsigned char*>(key_iv.data());
  auto* d = reinterpret_cast<unsigned char*>(data.data());
  if (!ctx || EVP_DecryptInit_ex(ctx.get(), cipher, nullptr, k, k + key_len) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx.get(), 0) != 1 ||
      EVP_DecryptUpdate(ctx.get(), d, &out_len, d, static_cast<int>(data.size())) != 1 ||
      static_cast<std::size_t>(out_len) != data.size()) {
    return tl::unexpected(refused("the key file could not be decrypted"));
  }
  return {};
}

struct Envelope {
  std::string_view cipher;
  std::string_view kdf;
  std::string_view kdf_options;
  std::string_view public_blob;
  std::string_view private_section;
};

Result<Envelope> envelope(std::string_view raw) {
  SshReader r(raw);
  Envelope e;
  auto cipher = r.string();
  auto kdf = r.string();
  auto kdf_opts = r.string();
  auto count = r.u32();
  if (count && *count != 1) return tl::unexpected(refused("a key file holding " + std::to_string(*count) + " keys"));
  auto pub = r.string();
  auto priv = r.string();
  if (!r.ok() || !r.empty()) return tl::unexpected(refused("a damaged OpenSSH private key"));
  return Envelope{*cipher, *kdf, *kdf_opts, *pub, *priv};
}

// The private section in clear: `e.private_section` itself, or decrypted.
Result<void> open_section(const Envelope& e, const SshPassphraseFn& passphrase, Secret& out) {
  out.bytes.assign(e.private_section);
  if (e.cipher == "none" && e.kdf == "none") return {};
  const EVP_CIPHER* cipher = cipher_named(e.cipher);
  if (!cipher) {
    return tl::unexpected(refused("a key encrypted with " + std::string(e.cipher) +
                                  ", which git-courier does not open; re-encrypt it with ssh-keygen -p -Z aes256-ctr"));
  }
  SshReader opts(e.kdf_options);
  auto salt = opts.string();
  auto rounds = opts.u32();
  if (e.kdf != "bcrypt" || !salt || !rounds || *rounds > kMaxRounds) {
    return tl::unexpected(refused("a key file with an unsupported key derivation"));
  }
  if (!passphrase) return tl::unexpected(refused("the key is protected by a passphrase and none was given"));
  auto pass = passphrase();
  if (!pass) return tl::unexpected(pass.error());
  Secret phrase{std::move(*pass)};
  const auto key_len = static_cast<std::size_t>(EVP_CIPHER_get_key_length(cipher));
  const auto iv_len = static_cast<std::size_t>(EVP_CIPHER_get_iv_length(cipher));
  auto derived = bcrypt_pbkdf(phrase.bytes, *salt, key_len + iv_len, *rounds);
  if (!derived) return tl::unexpected(refused("the key is protected by a passphrase and an empty one was given"));
  Secret key_iv{std::move(*derived)};
  if (out.bytes.size() % 16 != 0) return tl::unexpected(refused("a damaged OpenSSH private key"));
  return decrypt(cipher, key_iv.bytes, out.bytes);
}

Result<std::shared_ptr<const SshKey>> key_of_section(std::string_view section) {
  SshReader r(section);
  auto check1 = r.u32();
  auto check2 = r.u32();
  if (!check1 || !check2 || *check1 != *check2) {
    return tl::unexpected(refused("the passphrase is wrong (or the key file is damaged)"));
  }
  auto type = r.string();
  if (!type) return tl::unexpected(refused("a damaged OpenSSH private key"));
  if (*type == "ssh-ed25519") {
    auto pub = r.string();
    auto priv = r.string();
    if (!pub || !priv) return tl::unexpected(refused("a damaged Ed25519 key"));
    return make_ed25519_key(*pub, *priv);
  }
  if (type->substr(0, 11) == "ecdsa-sha2-") {
    auto curve = r.string();
    auto q = r.string();
    auto d = r.mpint();
    if (!curve || !q || !d || type->substr(11) != *curve) return tl::unexpected(refused("a damaged ECDSA key"));
    return make_ecdsa_key(*curve, *q, *d);
  }
  return tl::unexpected(refused("a key of type " + std::string(*type) +
                                ", which git-courier does not sign with (use ssh-keygen -t ed25519 or -t ecdsa)"));
}

}  // namespace

Result<std::shared_ptr<const SshKey>> parse_openssh_key(std::string_view text, const SshPassphraseFn& passphrase) {
  auto raw = dearmour(text);
  if (!raw) return tl::unexpected(raw.error());
  Secret keep{std::move(*raw)};
  auto e = envelope(keep.bytes);
  if (!e) return tl::unexpected(e.error());
  Secret section;
  if (auto opened = open_section(*e, passphrase, section); !opened) return tl::unexpected(opened.error());
  auto key = key_of_section(section.bytes);
  if (!key) return key;
  if ((*key)->public_blob() != e->public_blob) {
    return tl::unexpected(refused("the key file's public and private halves do not match"));
  }
  return key;
}

}  // namespace courier::agent
