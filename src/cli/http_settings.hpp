// http_settings.hpp — the trust anchor and the proxy a push uses, decided
// in the parent from the command line, git's configuration and the
// environment, key by key with git's precedence (docs/operations.md "git's
// configuration"). The child is told only the result, as job fields (A1).
//
// Trust:  --ca-file (pins: nothing else is trusted)
//         > GIT_SSL_CAINFO > http.<url>.sslCAInfo > http.sslCAInfo
//         > the system store.
// Proxy:  remote.<name>.proxy (empty: no proxy at all)
//         > http.<url>.proxy > http.proxy (empty: no proxy at all)
//         > https_proxy > HTTPS_PROXY (https remotes) or http_proxy (http)
//         > all_proxy > ALL_PROXY;
//         then NO_PROXY / no_proxy (the lower-case one wins, as in git)
//         exempts the remote's host as libcurl reads the list — for a proxy
//         from any source, as in git.
// Proxy authentication: GIT_HTTP_PROXY_AUTHMETHOD > remote.<name>.proxyAuthMethod
//         > http.<url>.proxyAuthMethod > http.proxyAuthMethod; only
//         `basic` and `anyauth` (git's default) can be honoured, both as a
//         preemptive Basic header from the proxy URL's credentials; digest,
//         negotiate and ntlm are refused.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "courier/result.hpp"
#include "repo/git_config.hpp"
#include "wire/remote.hpp"

namespace courier::cli {

// An environment variable's value, or nothing when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// This process's environment.
EnvLookup process_env();

struct HttpSettings {
  // The CA file the legs trust alone, or none (the system store).
  std::optional<std::string> ca_file;
  // Where it came from, for messages: "--ca-file", "GIT_SSL_CAINFO",
  // "http.<url>.sslCAInfo" / "http.sslCAInfo" (as configured), or "".
  std::string ca_source;
  // The proxy as configured (it may carry credentials: a secret, never
  // printed but redacted), or none (a direct connection).
  std::optional<std::string> proxy;
  // Where it came from, for messages ("http.proxy", "HTTPS_PROXY", ...).
  std::string proxy_source;
};

// `url`: the remote URL as given. `remote_name`: the configured remote it
// came from, when the user named one (its remote.<name>.proxy and
// .proxyAuthMethod apply); none for a URL given as such.
// Errors: invalid_argument — the URL, a proxy that cannot be used (its kind,
// its spelling, a user without a password; shown redacted), or a proxy
// authentication method other than basic or anyauth; each names the
// setting it came from.
Result<HttpSettings> resolve_http_settings(const repo::GitConfig& config, const std::string& url,
                                           const std::optional<std::string>& remote_name,
                                           const std::optional<std::string>& ca_file_flag, const EnvLookup& env);
// The same for a remote already read (wire::parse_remote, by validate()):
// nothing parses it again.
Result<HttpSettings> resolve_http_settings(const repo::GitConfig& config, const wire::Remote& remote,
                                           const std::optional<std::string>& remote_name,
                                           const std::optional<std::string>& ca_file_flag, const EnvLookup& env);

// libcurl's reading of a NO_PROXY list for `host` (lower-case, an IPv6
// literal in brackets): "*" alone exempts every host; entries are separated
// by commas (blanks around them ignored); a name matches itself and its
// subdomains (a leading '.' ignored); an IPv4 entry matches an address, or
// a network written with /bits; an IPv6 entry matches the same literal.
bool no_proxy_matches(const std::string& host, const std::string& no_proxy);

}  // namespace courier::cli
