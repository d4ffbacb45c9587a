// bcrypt_pbkdf.cpp — OpenSSH's key derivation for passphrase-protected keys
// (blowfish.hpp), after OpenBSD's bcrypt_pbkdf.c (Ted Unangst, ISC
// licence): PBKDF2 whose hash is bcrypt over SHA-512 of the passphrase and
// salt, with the output bytes interleaved across blocks.
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>

#include "agent/blowfish.hpp"

namespace courier::agent {

namespace {

constexpr std::size_t kHashWords = 8;
constexpr std::size_t kHashBytes = kHashWords * 4;
constexpr std::size_t kSha512Bytes = 64;

std::string sha512(std::string_view data) {
  std::string out(kSha512Bytes, '\0');
  unsigned len = 0;
  if (EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(out.data()), &len, EVP_sha512(), nullptr) !=
      1) {
    return {};
  }
  return out;
}

// One bcrypt hash of the hashed passphrase under the hashed salt.
std::array<unsigned char, kHashBytes> bcrypt_hash(std::string_view sha_pass, std::string_view sha_salt) {
  BlowfishState st;
  st.expand(sha_salt, sha_pass);
  for (int i = 0; i < 64; ++i) {
    st.expand0(sha_salt);
    st.expand0(sha_pass);
  }
  constexpr std::string_view kMagic = "OxychromaticBlowfishSwatDynamite";
  std::array<std::uint32_t, kHashWords> c{};
  for (std::size_t i = 0; i < kHashWords; ++i) {
    for (std::size_t k = 0; k < 4; ++k) c[i] = (c[i] << 8) | static_cast<std::uint8_t>(kMagic[i * 4 + k]);
  }
  for (int i = 0; i < 64; ++i) {
    for (std::size_t b = 0; b < kHashWords; b += 2) st.encipher(c[b], c[b + 1]);
  }
  std::array<unsigned char, kHashBytes> out{};
  for (std::size_t i = 0; i < kHashWords; ++i) {
    for (std::size_t k = 0; k < 4; ++k) out[4 * i + k] = static_cast<unsigned char>((c[i] >> (8 * k)) & 0xFF);
  }
  OPENSSL_cleanse(c.data(), sizeof c);
  return out;
}

}  // namespace

Result<std::string> bcrypt_pbkdf(std::string_view passphrase, std::string_view salt, std::size_t key_len,
                                 unsigned rounds) {
  if (rounds < 1 || passphrase.empty() || salt.empty() || key_len == 0 || key_len > kHashBytes * kHashBytes ||
      salt.size() > (1u << 20)) {
    return fail(Errc::invalid_argument, "bcrypt_pbkdf: parameters out of range");
  }
  std::string sha_pass = sha512(passphrase);
  if (sha_pass.empty()) return fail(Errc::os_error, "bcrypt_pbkdf: SHA-512 failed");
  const std::size_t stride = (key_len + kHashBytes - 1) / kHashBytes;
  std::size_t amount = (key_len + stride - 1) / stride;
  std::string key(key_len, '\0');
  std::string count_salt(salt);
  count_salt.append(4, '\0');
  std::size_t left = key_len;
  for (std::uint32_t count = 1; left > 0; ++count) {
    for (std::size_t k = 0; k < 4; ++k) count_salt[salt.size() + k] = static_cast<char>((count >> (24 - 8 * k)) & 0xFF);
    auto tmp = bcrypt_hash(sha_pass, sha512(count_salt));
    auto out = tmp;
    for (unsigned r = 1; r < rounds; ++r) {
      tmp = bcrypt_hash(sha_pass, sha512(std::string_view(reinterpret_cast<const char*>(tmp.data()), tmp.size())));
      for (std::size_t j = 0; j < out.size(); ++j) out[j] ^= tmp[j];
    }
    amount = std::min(amount, left);
    std::size_t i = 0;
    for (; i < amount; ++i) {
      const std::size_t dest = i * stride + (count - 1);
      if (dest >= key_len) break;
      key[dest] = static_cast<char>(out[i]);
    }
    left -= i;
    OPENSSL_cleanse(out.data(), out.size());
    OPENSSL_cleanse(tmp.data(), tmp.size());
  }
  OPENSSL_cleanse(sha_pass.data(), sha_pass.size());
  return key;
}

}  // namespace courier::agent
