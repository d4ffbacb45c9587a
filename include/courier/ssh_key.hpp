// ssh_key.hpp — (public) an SSH private key held by the host process: the
// key the parent's agent signs with when a delivery's remote is ssh:// (A5).
// Its private half never leaves this process: the child and ssh see only
// the public half and a socket that signs one user-authentication request
// of one bound session (docs/auth.md "SSH remotes").
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "courier/result.hpp"

namespace courier {

class SshKey {
 public:
  virtual ~SshKey() = default;
  // The SSH algorithm name: "ssh-ed25519", "ecdsa-sha2-nistp256", ...
  virtual std::string algorithm() const = 0;
  // The public key in SSH wire form (RFC 4253 6.6), as an agent lists it.
  virtual std::string public_blob() const = 0;
  // The public key as one authorized_keys line ("ssh-ed25519 AAAA...").
  virtual std::string public_line() const = 0;
  // "SHA256:<base64 without padding>", as ssh-keygen -l prints it.
  virtual std::string fingerprint() const = 0;
  // The SSH signature blob (string algorithm, string signature) over
  // `data`. Errors: internal (the crypto library failed).
  virtual Result<std::string> sign(std::string_view data) const = 0;
};

// Asked for a passphrase only when the key file is encrypted.
using SshPassphraseFn = std::function<Result<std::string>()>;

// Loads a private key as ssh-keygen writes it (OpenSSH format; Ed25519 and
// ECDSA). Errors: invalid_argument naming the file and what is wrong
// (missing, readable by others, not a private key, an unsupported type, a
// wrong passphrase, encrypted and no passphrase given).
Result<std::shared_ptr<const SshKey>> load_ssh_key(const std::string& path, const SshPassphraseFn& passphrase = {});

}  // namespace courier
