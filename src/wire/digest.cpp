// digest.cpp — SHA-256 over OpenSSL's libcrypto.
#include "wire/digest.hpp"

#include <openssl/err.h>

#include <array>

namespace courier::wire {

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

bool is_sha256_hex(std::string_view text) { return text.size() == 64 && is_hex(text, HexCase::lower); }

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
