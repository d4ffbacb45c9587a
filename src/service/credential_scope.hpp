// credential_scope.hpp — the service's named credentials and where each may
// be sent. A caller of `serve` chooses the remote; the operator chooses, per
// credential, the remotes (or URL prefixes) that credential may go to
// (`--credential-scope NAME=URL`). A delivery naming a credential for a
// remote outside its scope is refused before anything is journalled or
// spawned, so a caller cannot send a service's token to a server of its own.
//
// Scopes and remotes are compared in the one canonical form of
// wire::parse_remote (scheme and host case folded, default port dropped, a
// trailing "/" dropped; ambiguous spellings refused). An entry admits the
// remote it names and every remote under it at a path-segment boundary:
// `https://h/org` admits `https://h/org/r.git`, never `https://h/organisation`
// nor `https://h/org.git`; scheme, host and port must be the same exactly
// (`https://h/` admits every repository of h on port 443 and nothing else).
// Every credential needs at least one entry: the service refuses to start
// with a credential that has none.
//
// SSH (A5): an ssh-key:FILE credential is scoped to ssh remotes only, and
// every other credential to http(s) remotes only: the service refuses to
// start with a scope entry of the other kind, so an https token never goes
// to an ssh remote nor an SSH key to an https one. An ssh entry keeps its
// user name (part of the remote, H2): `ssh://git@h/org` admits
// `git@h:org/r.git`'s canonical form only when the paths agree (that one is
// `ssh://git@h/~/org/r.git`, under `ssh://git@h/~/org`), never another
// user's; `ssh://git@h/` admits every repository of user git at h.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "courier/courier.hpp"
#include "courier/result.hpp"
#include "courier/ssh_key.hpp"

namespace courier::service {

struct ServiceCredential {
  std::string spec;                // key:FILE, bearer:FILE, ssh-key:FILE or credential
  std::vector<std::string> scope;  // canonical remotes or prefixes, at least one
  // ssh-key:FILE: the key, loaded once at start (load_ssh_keys); it stays
  // in this process (A1).
  std::shared_ptr<const SshKey> ssh_key;
};

// Whether a credential's spelling is an SSH key's (ssh-key:FILE).
bool is_ssh_spec(const std::string& spec);

// Name -> credential.
using ServiceCredentials = std::map<std::string, ServiceCredential>;

// One scope entry as given (an https URL, no user information, no query;
// or an ssh remote, its user kept, "ssh://[user@]host[:port]/" for every
// repository there), in canonical form. Errors: invalid_argument (from
// wire::parse_remote, or user information in an https entry).
Result<std::string> scope_entry(std::string_view url);

// Whether `remote` (any spelling; parsed here) is one of `scope`'s entries
// or under one at a path-segment boundary. A remote that does not parse is
// admitted by no scope.
bool scope_admits(const std::vector<std::string>& scope, std::string_view remote);
// The same for a remote validate() read already (its canonical form), not
// read again; and for a request validate() accepted.
bool scope_admits_canonical(const std::vector<std::string>& scope, const std::string& canonical);
bool scope_admits(const std::vector<std::string>& scope, const CheckedRequest& request);

// The credentials of `serve`'s options: every name in `specs` with the
// entries `scopes` gives it. Errors: invalid_argument naming the credential
// (no scope, with how to add one; a scope for a name that is no credential;
// an entry that is not a remote).
Result<ServiceCredentials> service_credentials(const std::map<std::string, std::string>& specs,
                                               const std::map<std::string, std::vector<std::string>>& scopes);

// The keys of the ssh-key:FILE credentials, loaded into `credentials`.
// The service asks no passphrase: an encrypted key is refused, saying so.
// Errors: invalid_argument naming the credential.
Result<void> load_ssh_keys(ServiceCredentials& credentials);

// The refusal's words: the credential and the remote (redacted), and the
// option that widens the scope. Never the credential's file or secret.
std::string out_of_scope_message(const std::string& name, std::string_view remote);

}  // namespace courier::service
