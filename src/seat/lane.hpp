// lane.hpp — remotes: the one place a remote URL is parsed, refused or made
// canonical, and the lane key that decides which deliveries exclude each
// other (one seat per lane, rule H2).
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
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "result.hpp"

namespace courier::seat {

// A URL taken apart by syntax alone (also used for leg URLs, with paths
// under the remote's).
struct ParsedUrl {
  std::string scheme;  // lower-case
  std::string host;    // lower-case; IPv6 literals keep their brackets
  int port = 0;        // explicit or default
  std::string path;    // as given, "/" when empty
  std::optional<std::string> userinfo;  // before an '@' in the authority, raw
};

// Errors: invalid_argument (no scheme, no host, bad port, query/fragment,
// whitespace or control characters). Messages never repeat user information.
Result<ParsedUrl> parse_url(std::string_view url);

// A delivery's remote, checked and canonical.
struct Remote {
  std::string canonical;            // scheme://host[:port]/path — sent, bound, printed
  std::optional<std::string> user;  // user name from the URL (percent-encoded as given)
  std::string lane;                 // the lane key
};

// Errors: invalid_argument, naming what is wrong and, for an ambiguous
// spelling, the canonical one to use instead.
Result<Remote> parse_remote(std::string_view url);

// The lane key of a remote. Errors: as parse_remote.
Result<std::string> lane_key(std::string_view url);

// A URL as it may be shown or recorded: any user information replaced by
// "***@". For text that may not even parse.
std::string redact_url(std::string_view url);

// A file name for the lane's cross-process lock: a readable prefix plus a
// 64-bit hash of the key (distinct keys that collide only over-serialise).
std::string lane_lock_name(const std::string& key);

}  // namespace courier::seat
