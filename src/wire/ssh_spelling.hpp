// ssh_spelling.hpp — the spellings git accepts for an SSH remote, each read
// as the one ssh:// URL it means, so that parse_remote has one grammar to
// judge (H2): `ssh://`, `git+ssh://` and `ssh+git://` URLs (the same
// transport under three names), and git's scp-like `[user@]host:path` and
// `[user@][ipv6]:path`. scp-like is git's rule: no "://", and a ':' before
// any '/' (else it is a local path). Its path is the server's, unescaped:
// relative to the user's home unless it starts with '/' or '~', so
// `host:x` means `ssh://host/~/x` and `host:/x` means `ssh://host/x` —
// two repositories, never one (H2).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "courier/result.hpp"

namespace courier::wire {

// The ssh:// URL `text` spells (its path percent-encoded where RFC 3986
// wants it), or nullopt when `text` is no SSH spelling (another scheme, a
// local path). Errors: invalid_argument for an scp-like address that
// cannot be one remote (no host, no path, a control character, an '@'
// after the host's ':', as in "user:password@host:path").
Result<std::optional<std::string>> ssh_url_of(std::string_view text);

}  // namespace courier::wire
