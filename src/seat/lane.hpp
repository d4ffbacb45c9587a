// lane.hpp — the lane key: the normalised remote URL that decides which
// deliveries exclude each other (one seat per lane).
//
// Rule: scheme and host lower-cased; the default port (443 for https, 80 for
// http) removed; user information removed; the path kept case-sensitive, one
// trailing "/" and then one trailing ".git" removed, an empty path becomes
// "/". So https://Host:443/team/repo.git/, https://host/team/repo.git and
// https://host/team/repo are one lane; http://host/r and https://host/r are
// two. A query or fragment makes the URL unusable as a remote.
#pragma once

#include <string>
#include <string_view>

#include "result.hpp"

namespace courier::seat {

struct ParsedUrl {
  std::string scheme;  // lower-case
  std::string host;    // lower-case; IPv6 literals keep their brackets
  int port = 0;        // explicit or default
  std::string path;    // as given, "/" when empty
};

// Errors: invalid_argument (no scheme, no host, bad port, query/fragment,
// whitespace or control characters).
Result<ParsedUrl> parse_url(std::string_view url);

// Errors: as parse_url.
Result<std::string> lane_key(std::string_view url);

// A file name for the lane's cross-process lock: a readable prefix plus a
// 64-bit hash of the key (distinct keys that collide only over-serialise).
std::string lane_lock_name(const std::string& key);

}  // namespace courier::seat
