// digest.cpp — SHA-256 and hex over OpenSSL's libcrypto.
#include "wire/digest.hpp"

#include <openssl/err.h>

#include <array>

namespace courier::wire {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string sha256(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  // EVP_Digest with SHA-256 cannot fail short of memory exhaustion, in which
  // case the empty result makes every comparison fail closed.
  if (EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr) != 1) {
    ERR_clear_error();
    return {};
  }
  return std::string(reinterpret_cast<const char*>(md.data()), len);
}

std::string to_hex(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kHexDigits[b >> 4]);
    out.push_back(kHexDigits[b & 0x0F]);
  }
  return out;
}

bool is_sha256_hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (hex_value(c) < 0) return false;
  }
  return true;
}

Result<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return fail(Errc::invalid_value, "hex: odd length");
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_value(hex[i]);
    const int lo = hex_value(hex[i + 1]);
    if (hi < 0 || lo < 0) return fail(Errc::invalid_value, "hex: not a lower-case hex digit");
    out.push_back(static_cast<char>((hi << 4) | lo));
  }
  return out;
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) { ok_ = ctx_ && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1; }

void Sha256::update(std::string_view bytes) {
  if (ok_) ok_ = EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) == 1;
}

std::string Sha256::hex_digest() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (!ok_ || EVP_DigestFinal_ex(ctx_.get(), md.data(), &len) != 1) {
    ERR_clear_error();
    return {};
  }
  ok_ = false;
  return to_hex(std::string_view(reinterpret_cast<const char*>(md.data()), len));
}

Error openssl_error(const std::string& what) {
  std::string message = what;
  bool first = true;
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    message += first ? ": " : "; ";
    message += buf;
    first = false;
  }
  if (first) message += ": (no OpenSSL reason given)";
  return Error{Errc::os_error, message};
}

void discard_openssl_errors() { ERR_clear_error(); }

}  // namespace courier::wire
