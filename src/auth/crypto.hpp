// crypto.hpp — the small cryptographic vocabulary of credential custody:
// base64 and base64url, hex, SHA-256, random bytes, and the one place where
// OpenSSL's error queue becomes an Error value.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "result.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>

#include <memory>

namespace courier::auth {

// Owners for OpenSSL objects, shared by every file that holds one.
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};


// RFC 4648 §5, without padding (as JWS wants it).
std::string base64url_encode(std::string_view bytes);
// Strict: the URL alphabet only, no padding, no whitespace, and the unused
// low bits of the last character must be zero (one text per byte string).
// Errors: invalid_value.
Result<std::string> base64url_decode(std::string_view text);

// RFC 4648 §4, padded (HTTP Basic).
std::string base64_encode(std::string_view bytes);

// SHA-256 of data: 32 raw bytes.
std::string sha256(std::string_view data);

std::string to_hex(std::string_view bytes);  // lower-case
// Exactly 64 lower-case hex digits: the form the child reports a body hash in.
bool is_sha256_hex(std::string_view text);
// Lower-case hex only. Errors: invalid_value.
Result<std::string> from_hex(std::string_view hex);

// Cryptographically strong random bytes (RAND_bytes). Errors: os_error.
Result<std::string> random_bytes(std::size_t n);

// Drains OpenSSL's thread-local error queue into one Error{os_error} whose
// message is "what: <openssl reason>; <reason>...". The one converter.
Error openssl_error(const std::string& what);
// Empties the queue when a failure is an answer, not an error (a signature
// that does not verify).
void discard_openssl_errors();

// Overwrites a secret before its memory is released (OPENSSL_cleanse: not
// optimised away).
void wipe(std::string& secret);

// Constant-time equality for secrets and MACs of equal length.
bool equal_constant_time(std::string_view a, std::string_view b);

}  // namespace courier::auth
