// ssh_keys.hpp — SSH keys over OpenSSL: a private key (Ed25519, ECDSA on
// nistp256/384/521) that signs in SSH's signature format, and the check of
// a signature by a public key given as an SSH blob (the server's host key
// in a session binding: Ed25519, ECDSA, RSA with SHA-2).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "courier/result.hpp"
#include "courier/ssh_key.hpp"

namespace courier::agent {

// From an Ed25519 private section: the public key (32 bytes) and the
// private one (64 bytes: seed then public). Errors: invalid_argument.
Result<std::shared_ptr<const SshKey>> make_ed25519_key(std::string_view pub, std::string_view priv);

// From an ECDSA private section: the curve ("nistp256", ...), the public
// point (uncompressed) and the private scalar. Errors: invalid_argument.
Result<std::shared_ptr<const SshKey>> make_ecdsa_key(std::string_view curve, std::string_view q, std::string_view d);

// True when `signature` (an SSH signature blob: string algorithm, string
// bytes) is `key_blob`'s valid signature over `data`. False for a bad
// signature, an algorithm that does not fit the key, or a key type this
// program does not check (ssh-rsa with SHA-1 included). Errors: none
// (every failure is a refusal).
bool verify_ssh_signature(std::string_view key_blob, std::string_view signature, std::string_view data);

}  // namespace courier::agent
