// ssh_key.cpp — loading an SSH private key (include/courier/ssh_key.hpp).
#include "courier/ssh_key.hpp"

namespace courier {

Result<std::shared_ptr<const SshKey>> load_ssh_key(const std::string& path, const SshPassphraseFn&) {
  return fail(Errc::invalid_argument, "ssh key '" + path + "': SSH keys are not supported yet");
}

}  // namespace courier
