// crypto.hpp — the small cryptographic vocabulary of credential custody:
// base64 and base64url, random bytes, wiping and comparing secrets.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "courier/result.hpp"
#include "wire/digest.hpp"

namespace courier::auth {

// Owners, digests and the OpenSSL error converter live in the wire leaf.
using wire::BioFree;
using wire::discard_openssl_errors;
using wire::from_hex;
using wire::is_sha256_hex;
using wire::MdCtxFree;
using wire::openssl_error;
using wire::PkeyFree;
using wire::sha256;
using wire::to_hex;

// RFC 4648 §5, without padding (as JWS wants it).
std::string base64url_encode(std::string_view bytes);
// Strict: the URL alphabet only, no padding, no whitespace, and the unused
// low bits of the last character must be zero (one text per byte string).
// Errors: invalid_value.
Result<std::string> base64url_decode(std::string_view text);

// RFC 4648 §4, padded (HTTP Basic).
std::string base64_encode(std::string_view bytes);

// Cryptographically strong random bytes (RAND_bytes). Errors: os_error.
Result<std::string> random_bytes(std::size_t n);

// Overwrites a secret before its memory is released (OPENSSL_cleanse: not
// optimised away).
void wipe(std::string& secret);

// Constant-time equality for secrets and MACs of equal length.
bool equal_constant_time(std::string_view a, std::string_view b);

}  // namespace courier::auth
