// remote.hpp — a delivery's remote: the one place a remote URL is refused or
// made canonical, the lane key that decides which deliveries exclude each
// other (one seat per lane, rule H2), and the scheme rule (T1).
//
// One remote, one lane, whatever its spelling. Spellings that every server
// resolves alike are folded silently (scheme and host case, the default
// port, a trailing "/"). Spellings that a server may resolve differently
// from another server, or from the client, are refused with the canonical
// spelling in the message: "." and ".." segments, empty segments ("//"),
// percent-encoded unreserved characters ("%72" for "r") and an encoded "/"
// ("%2F"). The canonical URL is what the child requests, what the minter
// binds tokens to, and what every outcome prints; it never carries user
// information. A password in the URL is refused (use --auth credential); a
// user name alone is kept aside for the credential helper.
//
// The lane key is coarser than the canonical URL, on purpose: two remotes
// that might be one repository must share a lane (over-serialising is safe,
// under-serialising is not). It drops a trailing ".git", decodes every
// percent-escape and folds the path's case (some servers ignore it). What no
// client can know stays out of reach: a host name and its IP address, or two
// names of one host, are two lanes (docs/design.md "Canonical remotes").
//
// SSH remotes (git's spellings: ssh://, git+ssh://, ssh+git:// and the
// scp-like [user@]host:path, ssh_spelling.hpp) have one canonical form,
// ssh://[user@]host[:port]/path (port 22 omitted, a path relative to the
// user's home written /~/path). There the user name IS part of the
// canonical remote and of the lane (H2): two users of one host may be two
// accounts with two homes; no user at all is a lane of its own (ssh picks
// the user then). A password is refused as for https.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "courier/result.hpp"
#include "wire/shell_quote.hpp"  // shell_quote: the path as ssh's command line gets it
#include "wire/url.hpp"

namespace courier::wire {

struct Remote {
  Url url;                          // the canonical URL taken apart (no user information)
  std::string canonical;            // scheme://host[:port]/path — sent, bound, printed (ssh: with user@)
  std::optional<std::string> user;  // user name from the URL (percent-encoded as given; ssh: plain)
  std::string lane;                 // the lane key
};

// Errors: invalid_argument, naming what is wrong and, for an ambiguous
// spelling, the canonical one to use instead.
Result<Remote> parse_remote(std::string_view text);

// The lane key of a remote. Errors: as parse_remote.
Result<std::string> lane_key(std::string_view text);

// The path git-receive-pack is asked to serve over ssh, as git passes it:
// the canonical path decoded; a home-relative "/~/x" sent as "x", as git
// sends the scp-like `host:x` (the command runs in the home directory, so
// it is the same repository as git's "~/x" for ssh://host/~/x), and
// another user's "/~bob/x" as "~bob/x". The command ssh runs is
// "git-receive-pack " + shell_quote(ssh_receive_pack_path(remote)).
std::string ssh_receive_pack_path(const Remote& remote);

// An ssh:// remote as ssh's command line and the parent's agent need it:
// the one place its host loses its brackets.
struct SshEndpoint {
  std::string user;         // "" when the remote names none
  std::string host;         // an IPv6 literal without its brackets
  int port = 22;            // the remote's, else 22
  bool port_given = false;  // the remote names a port other than 22
};

// Nullopt for a remote that is not ssh://.
std::optional<SshEndpoint> ssh_endpoint(const Remote& remote);

// T1: https, or plain http to a loopback address when the caller allowed
// it; ssh (host keys verified, A5). Errors: scheme_refused, saying which rule refused.
Result<void> check_scheme(const Url& url, bool allow_http_loopback);

}  // namespace courier::wire
