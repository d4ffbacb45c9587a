// openssh_key_file.hpp — the private key file ssh-keygen writes
// ("openssh-key-v1", PROTOCOL.key in OpenSSH): its armour, its one key,
// and the private section, decrypted with the passphrase when the file is
// protected (bcrypt_pbkdf, then AES in CTR or CBC mode).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "courier/result.hpp"
#include "courier/ssh_key.hpp"

namespace courier::agent {

// The key in `text` (a whole key file). `passphrase` is asked only when the
// file is encrypted. Errors: invalid_argument saying what is wrong (not
// this format, an unsupported cipher or key type, a wrong passphrase, no
// passphrase given), never naming a byte of the key.
Result<std::shared_ptr<const SshKey>> parse_openssh_key(std::string_view text, const SshPassphraseFn& passphrase);

}  // namespace courier::agent
