// proxy.hpp — an HTTP proxy as a delivery may use it (rule T1): the one
// place a proxy URL is read, refused or split into what the child may know
// (the proxy's address) and what stays in the parent (its credentials).
//
// Only an HTTP proxy spoken to in the clear and asked for a CONNECT tunnel
// is accepted: TLS then runs end to end between the child and the origin,
// verified against the origin's name, and the proxy sees neither the token
// nor the pack. Every other kind is refused, never bypassed: socks4, socks4a,
// socks5 and socks5h (libcurl would resolve, and with socks4 even leak, the
// origin's name outside the tunnel rules this program keeps) and https://
// proxies (a second TLS session with trust rules of its own). A proxy
// written without a scheme ("proxy.example:3128") is http://, and one
// without a port uses 1080, as in git and libcurl.
//
// Credentials in the proxy URL ("http://user:pass@proxy:3128") become one
// preemptive Basic "Proxy-Authorization" header line, made in the parent
// and handed to the child per leg; the URL the child gets carries none.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "courier/result.hpp"

namespace courier::wire {

// libcurl's (and so git's) port for a proxy URL that names none.
inline constexpr int kDefaultProxyPort = 1080;

struct Proxy {
  // http://host:port — what the child is told (no user information).
  std::string url;
  // "Proxy-Authorization: Basic ..." when the URL carried credentials.
  // A secret: never printed, never in a job, never journalled.
  std::optional<std::string> authorization;
};

// Errors: invalid_argument — a malformed URL (shown redacted), a proxy kind
// other than http:// (named, with what to use instead), a path or query in
// the proxy URL, or a user name without a password (credential helpers are
// not asked for proxies). Messages show the URL redacted (redact_url).
Result<Proxy> parse_proxy(std::string_view text);

}  // namespace courier::wire
