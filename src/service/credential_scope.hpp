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
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "courier/courier.hpp"
#include "courier/result.hpp"

namespace courier::service {

struct ServiceCredential {
  std::string spec;                // key:FILE, bearer:FILE or credential
  std::vector<std::string> scope;  // canonical remotes or prefixes, at least one
};

// Name -> credential.
using ServiceCredentials = std::map<std::string, ServiceCredential>;

// One scope entry as given (an https URL, no user information, no query),
// in canonical form. Errors: invalid_argument (from wire::parse_remote, or
// user information).
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

// The refusal's words: the credential and the remote (redacted), and the
// option that widens the scope. Never the credential's file or secret.
std::string out_of_scope_message(const std::string& name, std::string_view remote);

}  // namespace courier::service
