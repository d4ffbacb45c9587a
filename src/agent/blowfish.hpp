// blowfish.hpp — the Blowfish state bcrypt_pbkdf expands (OpenBSD's
// "eksblowfish" steps), and bcrypt_pbkdf itself: the key derivation
// ssh-keygen uses for a passphrase-protected key. Why the project carries
// its own rather than a library: docs/auth.md "Passphrase-protected keys".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "courier/result.hpp"

namespace courier::agent {

// Blowfish's initial state, the digits of pi (blowfish_pi.cpp).
extern const std::uint32_t kBlowfishPiS[4 * 256];
extern const std::uint32_t kBlowfishPiP[18];

struct BlowfishState {
  std::uint32_t s[4 * 256];
  std::uint32_t p[18];

  BlowfishState();   // the initial state
  ~BlowfishState();  // wiped: it holds a passphrase's hash
  BlowfishState(const BlowfishState&) = delete;
  BlowfishState& operator=(const BlowfishState&) = delete;

  void encipher(std::uint32_t& l, std::uint32_t& r) const;
  // Blowfish_expandstate: the key schedule salted with `data`.
  void expand(std::string_view data, std::string_view key);
  // Blowfish_expand0state: the key schedule without salt.
  void expand0(std::string_view key);
};

// bcrypt_pbkdf(passphrase, salt, rounds) → key_len bytes, as OpenSSH
// defines it. Errors: invalid_argument (an empty passphrase or salt, no
// rounds, a length out of range).
Result<std::string> bcrypt_pbkdf(std::string_view passphrase, std::string_view salt, std::size_t key_len,
                                 unsigned rounds);

}  // namespace courier::agent
