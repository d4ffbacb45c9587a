// url.hpp — http(s) URLs taken apart by syntax alone: the one parser every
// part of git-courier asks (the remote, the legs, the minter's binding, the
// verifier's audience), so there is one default-port rule and one idea of
// loopback.
//
// The grammar is RFC 3986's (scheme "://" authority path-abempty
// ["?" query]), with these deliberate narrowings, each of which refuses
// rather than guesses:
//   * a host is an IPv6 literal in brackets (no zone id) or a name of
//     letters, digits, '-', '.' and '_' (no percent-escapes, no sub-delims:
//     resolvers and libcurl treat those differently);
//   * a host that reads as a number (what inet_aton would accept, such as
//     "127.1" or "0x7f.0.0.1") must be a plain dotted quad without leading
//     zeros, so that no two programs see two addresses in one spelling and
//     an IPv4 address has exactly one spelling (one lane, H2);
//   * an IPv6 literal is rewritten in its RFC 5952 form ("[0:0::0001]" is
//     "[::1]"), and an IPv4-mapped one ("[::ffff:127.0.0.1]") is refused
//     with its dotted quad: one address, one spelling, one lane (H2);
//   * user information, path and query may hold only RFC 3986's characters
//     for them, and every '%' must start a two-digit escape;
//   * a fragment, whitespace, control characters and raw non-ASCII bytes
//     are refused (percent-encode them).
// tests/unit/wire-url.cpp checks it against libcurl's own parser (CURLU):
// whatever this parser accepts, libcurl accepts and reads alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "courier/result.hpp"
#include "wire/hex.hpp"  // hex_digit_value: an escape's digits

namespace courier::wire {

// RFC 3986's character rules, shared by the parser and the remote rules.
// Section 2.3: characters that mean the same percent-encoded or not.
bool is_unreserved(char c);
// %XX escapes decoded; a '%' not followed by two hex digits is kept as it
// is. The one decoder of URL escapes (user information, credential paths).
std::string percent_decode(std::string_view s);
// A query's form encoding (application/x-www-form-urlencoded): '+' is a
// space, then as percent_decode.
std::string form_decode(std::string_view s);
// One byte as its escape: '%' and two upper-case hex digits (RFC 3986 2.1).
std::string percent_escape(char byte);
// ASCII letters lowered; every other byte kept.
std::string ascii_lower(std::string_view s);

// 443 for https, 80 for http, 22 for ssh, 0 for anything else.
int default_port(std::string_view scheme);

struct Url {
  std::string scheme;                   // lower-case
  std::optional<std::string> userinfo;  // before an '@' in the authority, raw
  std::string host;                     // lower-case; an IPv6 literal in RFC 5952 form, in its brackets
  int port = 0;                         // explicit, else default_port(scheme)
  bool port_given = false;              // the URL spelled a port
  std::string path;                     // as given, "/" when empty
  std::optional<std::string> query;     // after '?', raw

  // scheme://host[:port], the default port omitted.
  std::string origin() const;
  // origin + path [+ "?" query]: what is requested, never user information.
  std::string without_userinfo() const;
  // 127.0.0.0/8 as a dotted quad, or [::1].
  bool loopback() const;
};

// Errors: invalid_argument, "malformed <what> '<url>': <why>"; the message
// never repeats user information (the URL is shown redacted).
Result<Url> parse_url(std::string_view text, std::string_view what = "URL");

// What redact_url hides: all user information (a remote's: a user name
// may be a token), or only its password (a state URL's: the user name says
// who connects to the database).
enum class Redact { userinfo, password };

// A URL as it may be shown or recorded: the one redaction of URLs, for
// remotes, proxies and state URLs alike. For text that may not even parse,
// so it reads the user information as everything between "://" and the
// LAST '@' (a password may hold an unencoded '/', '?' or '#'; a path that
// holds an '@' is hidden up to it too). That part becomes "***" (or, with
// Redact::password, what follows its first ':'); the value of any
// `password=` query parameter becomes "***"; control characters become '?'.
std::string redact_url(std::string_view text, Redact what = Redact::userinfo);

// Whether redact_url(text, Redact::password) hides anything: a password in
// the user information or a `password=` parameter.
bool carries_password(std::string_view text);

}  // namespace courier::wire
