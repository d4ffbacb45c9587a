// url_match.hpp — git's `http.<url>.<key>` matching (git's urlmatch.c), the
// one place it is done: which configuration entry git would use for a key
// when it talks to a URL, as `git config --get-urlmatch` answers.
//
// A `section.<pattern>.key` entry applies to a URL when, after both are
// normalised (scheme and host lowercased, the default port dropped,
// percent-escapes of unreserved characters decoded, "." and ".." resolved):
//   * the schemes are equal;
//   * the pattern names no user, or the URL names the same user;
//   * the hosts are equal label by label, where a pattern label that is
//     exactly "*" matches any one label ("*.example.com" matches
//     "a.example.com", not "a.b.example.com" nor "example.com");
//   * the ports are equal;
//   * the pattern's path is a prefix of the URL's ending on a "/" boundary
//     ("/repo" matches "/repo" and "/repo/x", not "/repository").
// The most specific match wins — the longer pattern host, then the longer
// path match, then a pattern that named the user — and among equally
// specific ones (a plain `section.key` is the least specific of all) the
// last in git's reading order. A pattern that is not a URL this program can
// read (src/wire/url.*) matches nothing.
#pragma once

#include <optional>
#include <string>

#include "courier/result.hpp"
#include "repo/git_config.hpp"

namespace courier::cli {

// The value git would use for `section.key` (both lowercase, e.g. "http",
// "sslcainfo") when talking to `url`, or nothing when no entry applies.
// Errors: invalid_argument (`url` is not a URL; the message shows it
// redacted).
Result<std::optional<std::string>> get_urlmatch(const repo::GitConfig& config, const std::string& section,
                                                const std::string& key, const std::string& url);

}  // namespace courier::cli
