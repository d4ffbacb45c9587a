// digest.hpp — SHA-256 (spelled in hex by wire/hex.hpp), and the one place where OpenSSL's error queue
// becomes an Error value. The child hashes the body it uploads, the parent
// binds a token to that hash, a verifier checks it: all of them ask here.
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>

#include <memory>
#include <string>
#include <string_view>

#include "courier/result.hpp"
#include "wire/hex.hpp"  // to_hex, from_hex: the digests are spelled in hex

namespace courier::wire {

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

// SHA-256 of data: 32 raw bytes (empty only if OpenSSL ran out of memory,
// which makes every comparison fail closed).
std::string sha256(std::string_view data);

// SHA-256 fed piece by piece (a body streamed from a spool file).
class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  // Lower-case hex of the digest; "" if OpenSSL failed (compares unequal to
  // every real digest).
  std::string hex_digest();

 private:
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx_;
  bool ok_ = false;
};

// Exactly 64 lower-case hex digits: the form the child reports a body hash in.
bool is_sha256_hex(std::string_view text);

// Drains OpenSSL's thread-local error queue into one Error{os_error} whose
// message is "what: <openssl reason>; <reason>...". The one converter.
Error openssl_error(const std::string& what);
// Empties the queue when a failure is an answer, not an error (a signature
// that does not verify).
void discard_openssl_errors();

}  // namespace courier::wire
