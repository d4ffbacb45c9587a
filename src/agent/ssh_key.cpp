// ssh_key.cpp — loading an SSH private key (include/courier/ssh_key.hpp):
// the file is read as ssh reads it (a regular file of at most
// sys::kMaxSecretFile bytes, no symbolic link followed, refused when group
// or others may read it), then parsed by openssh_key_file.cpp.
#include "courier/ssh_key.hpp"

#include <openssl/crypto.h>

#include <cstdio>

#include "agent/openssh_key_file.hpp"
#include "sys/small_file.hpp"

namespace courier {

Result<std::shared_ptr<const SshKey>> load_ssh_key(const std::string& path, const SshPassphraseFn& passphrase) {
  const std::string what = "ssh key '" + path + "': ";
  auto file = sys::read_small_regular_file(path, sys::kMaxSecretFile);
  if (!file) return fail(Errc::invalid_argument, what + file.error().message);
  if ((file->mode & 077) != 0) {
    OPENSSL_cleanse(file->bytes.data(), file->bytes.size());
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", file->mode);
    return fail(Errc::invalid_argument, what + "its permissions " + mode +
                                            " let other users read it; ssh refuses such a key too (chmod 600 " + path +
                                            ")");
  }
  auto key = agent::parse_openssh_key(file->bytes, passphrase);
  OPENSSL_cleanse(file->bytes.data(), file->bytes.size());
  if (!key) return fail(Errc::invalid_argument, what + key.error().message);
  return key;
}

}  // namespace courier
