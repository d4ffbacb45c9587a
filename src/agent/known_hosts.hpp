// known_hosts.hpp — the parent's own reading of an OpenSSH known_hosts
// file (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"): which host keys it accepts
// for one name. Host keys are verified, never learned (A5): nothing here
// writes to the user's file.
//
// Read: plain and hashed ("|1|salt|hmac-sha1") host names, comma lists,
// wildcards `*` and `?`, negation `!`, `[host]:port`, `@revoked` (that key
// is refused for every host, whatever its line's names), and
// `@cert-authority`, refused for the host it names (certificates are not
// supported: docs/auth.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "courier/result.hpp"

namespace courier::agent {

struct KnownHostKeys {
  std::string alias;                  // the name looked up
  std::vector<std::string> accepted;  // key blobs listed for it, none revoked
  std::vector<std::string> revoked;   // every @revoked key blob in the file
};

// The name ssh looks a host up under (its HostKeyAlias here): `host` for
// port 22, `[host]:port` otherwise. `host` is given without brackets.
std::string host_key_alias(const std::string& host, int port);

// True when `name` (lower-case) matches the pattern list `patterns` as ssh
// matches it: some pattern matches and no negated one does.
bool host_patterns_match(std::string_view patterns, std::string_view name);

// The keys `text` (a whole file, named `file` in messages) lists for
// `alias`. Errors: transport_failed naming the alias and the file when it
// lists no usable key for the name, or when a @cert-authority line names it.
Result<KnownHostKeys> known_host_keys(std::string_view text, const std::string& file, const std::string& alias);

// The same, read from the file (a regular file, no symbolic link followed).
// A missing file lists nothing (the same error as no entry).
Result<KnownHostKeys> read_known_hosts(const std::string& file, const std::string& alias);

// What ssh is given for this delivery: the accepted keys under the alias,
// then every revoked key, one line each.
std::string known_hosts_text(const KnownHostKeys& keys);

}  // namespace courier::agent
