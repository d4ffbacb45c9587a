// crypto.cpp — encodings, hashing and randomness over OpenSSL's libcrypto.
#include "auth/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>

namespace courier::auth {

namespace {

int url_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  // EVP_EncodeBlock writes 4 output bytes per 3 input bytes plus a NUL; it
  // takes an int length, so feed it in slices far below INT_MAX.
  constexpr std::size_t kSlice = 3 * 4096;
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4 + 1);
  std::array<unsigned char, kSlice / 3 * 4 + 1> buf{};
  for (std::size_t at = 0; at < bytes.size(); at += kSlice) {
    const std::size_t n = std::min(kSlice, bytes.size() - at);
    const int written =
        EVP_EncodeBlock(buf.data(), reinterpret_cast<const unsigned char*>(bytes.data() + at), static_cast<int>(n));
    out.append(reinterpret_cast<const char*>(buf.data()), static_cast<std::size_t>(written));
  }
  return out;
}

std::string base64url_encode(std::string_view bytes) {
  std::string out = base64_encode(bytes);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (auto& c : out) {
    if (c == '+')
      c = '-';
    else if (c == '/')
      c = '_';
  }
  return out;
}

Result<std::string> base64url_decode(std::string_view text) {
  if (text.size() % 4 == 1) return fail(Errc::invalid_value, "base64url: impossible length");
  std::string out;
  out.reserve(text.size() * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = url_value(c);
    if (v < 0) return fail(Errc::invalid_value, "base64url: character outside the URL-safe alphabet");
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // Leftover bits must be zero: otherwise two texts would decode alike.
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) return fail(Errc::invalid_value, "base64url: non-canonical ending");
  return out;
}

Result<std::string> random_bytes(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX)) return fail(Errc::invalid_argument, "random_bytes: too many");
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
    return tl::unexpected(openssl_error("RAND_bytes"));
  }
  return out;
}

void wipe(std::string& secret) {
  if (!secret.empty()) OPENSSL_cleanse(secret.data(), secret.size());
  secret.clear();
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace courier::auth
