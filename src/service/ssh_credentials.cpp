// ssh_credentials.cpp — the keys of the service's ssh-key:FILE credentials,
// loaded once at start (credential_scope.hpp). Apart from the scopes, so
// that what reads a submission's body (and its fuzz target) links no key
// loader.
#include "courier/ssh_key.hpp"
#include "service/credential_scope.hpp"

namespace courier::service {

Result<void> load_ssh_keys(ServiceCredentials& credentials) {
  for (auto& [name, c] : credentials) {
    if (!is_ssh_spec(c.spec)) continue;
    const std::string file = c.spec.substr(std::string_view("ssh-key:").size());
    auto key = load_ssh_key(file, [&]() -> Result<std::string> {
      return fail(Errc::invalid_argument,
                  "it is encrypted, and the service asks no passphrase: give it a key "
                  "without one (ssh-keygen -p -N '' -f FILE on a copy kept 0600)");
    });
    if (!key) return fail(Errc::invalid_argument, "--credential " + name + ": " + key.error().message);
    c.ssh_key = *key;
  }
  return {};
}

}  // namespace courier::service
