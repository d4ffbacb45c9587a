// proxy.cpp — a proxy URL read, refused or split into address and
// credentials (see proxy.hpp for the rules and why).
#include "wire/proxy.hpp"

#include <openssl/evp.h>

#include <vector>

#include "wire/url.hpp"

namespace courier::wire {

namespace {

// RFC 7617's user-pass in base64 (OpenSSL's encoder; the credentials of a
// proxy URL are short, far below its int length).
std::string basic_credentials(const std::string& user_pass) {
  std::vector<unsigned char> out(4 * ((user_pass.size() + 2) / 3) + 1);
  const int n = EVP_EncodeBlock(out.data(), reinterpret_cast<const unsigned char*>(user_pass.data()),
                                static_cast<int>(user_pass.size()));
  return std::string(reinterpret_cast<const char*>(out.data()), static_cast<std::size_t>(n > 0 ? n : 0));
}

}  // namespace

Result<Proxy> parse_proxy(std::string_view text) {
  // git and libcurl read a proxy without a scheme as http://.
  const std::string spelled =
      text.find("://") == std::string_view::npos ? "http://" + std::string(text) : std::string(text);
  const std::string shown = redact_url(text);
  const auto sep = spelled.find("://");
  const std::string scheme = ascii_lower(std::string_view(spelled).substr(0, sep));
  if (scheme.rfind("socks", 0) == 0) {
    return fail(Errc::invalid_argument, "proxy '" + shown + "': " + scheme +
                                            " proxies are not supported; only an http:// proxy that tunnels "
                                            "with CONNECT is (TLS to the remote stays end to end)");
  }
  if (scheme == "https") {
    return fail(Errc::invalid_argument, "proxy '" + shown +
                                            "': https:// proxies are not supported; only an http:// proxy that "
                                            "tunnels with CONNECT is (TLS to the remote stays end to end)");
  }
  if (scheme != "http") {
    return fail(Errc::invalid_argument,
                "proxy '" + shown + "': the scheme " + scheme + ":// is not a proxy kind; use http://HOST:PORT");
  }
  auto u = parse_url(spelled, "proxy URL");
  if (!u) return tl::unexpected(u.error());
  if (u->path != "/" || u->query) {
    return fail(Errc::invalid_argument, "proxy '" + shown + "': a proxy URL names a host and a port, no path");
  }
  if (!u->port_given) u->port = kDefaultProxyPort;
  Proxy p;
  p.url = "http://" + u->host + ":" + std::to_string(u->port);
  if (u->userinfo) {
    const auto colon = u->userinfo->find(':');
    if (colon == std::string::npos) {
      return fail(Errc::invalid_argument, "proxy '" + shown +
                                              "' names a user without a password; write both in the proxy URL "
                                              "(credential helpers are not asked for proxies)");
    }
    const std::string user = percent_decode(u->userinfo->substr(0, colon));
    const std::string pass = percent_decode(u->userinfo->substr(colon + 1));
    p.authorization = "Proxy-Authorization: Basic " + basic_credentials(user + ":" + pass);
  }
  return p;
}

}  // namespace courier::wire
