// ssh_spelling.cpp — git's SSH spellings read as ssh:// URLs (see
// ssh_spelling.hpp).
#include "wire/ssh_spelling.hpp"

#include "wire/url.hpp"

namespace courier::wire {

namespace {

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && ascii_lower(text.substr(0, prefix.size())) == prefix;
}

// A path byte RFC 3986 lets stand in a path; every other byte is escaped.
bool path_byte(char c) {
  return is_unreserved(c) || c == '/' || c == ':' || c == '@' ||
         (c != '\0' && std::string_view("!$&'()*+,;=").find(c) != std::string_view::npos);
}

// The scp-like path as a URL path: '/' and '~' paths as they are, any
// other relative to the user's home ("/~/"), every byte outside a URL
// path's alphabet escaped ('%' included: git never decodes an scp-like
// path).
std::string url_path(std::string_view path) {
  std::string out = path.front() == '/' ? "" : path.front() == '~' ? "/" : "/~/";
  for (const char c : path) out += path_byte(c) ? std::string(1, c) : percent_escape(c);
  return out;
}

struct ScpParts {
  std::string_view user_host;  // "[user@]host" or "[user@][v6]"
  std::string_view path;
};

// Where git splits an scp-like address: at the ':' after a bracketed
// host ("@[" or a leading '['), else at the first ':'.
Result<ScpParts> split_scp(std::string_view text) {
  const auto at_bracket = text.find("@[");
  const std::size_t start = at_bracket == std::string_view::npos ? 0 : at_bracket + 1;
  if (text.substr(start, 1) == "[") {
    const auto close = text.find(']', start);
    if (close == std::string_view::npos || text.substr(close + 1, 1) != ":") {
      return fail(Errc::invalid_argument, "an IPv6 host in an scp-like address is written [user@][address]:path");
    }
    return ScpParts{text.substr(0, close + 1), text.substr(close + 2)};
  }
  const auto colon = text.find(':');
  return ScpParts{text.substr(0, colon), text.substr(colon + 1)};
}

Result<std::string> scp_url(std::string_view text) {
  const std::string shown = redact_url(text);
  auto bad = [&](const std::string& why) {
    return fail(Errc::invalid_argument, "scp-like ssh remote '" + shown + "': " + why);
  };
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return bad("it contains a control character");
  }
  auto parts = split_scp(text);
  if (!parts) return bad(parts.error().message);
  const auto at = parts->user_host.rfind('@');
  const std::string_view host = at == std::string_view::npos ? parts->user_host : parts->user_host.substr(at + 1);
  if (host.empty()) return bad("no host before the ':'");
  if (parts->path.empty()) return bad("no repository path after the ':'");
  if (parts->path.substr(0, parts->path.find('/')).find('@') != std::string_view::npos) {
    return bad(
        "an '@' after the host's ':' (if this is user:password@host, a password is refused: use --auth "
        "ssh-key:FILE; a path holding '@' is written ssh://host/path with %40)");
  }
  return "ssh://" + std::string(parts->user_host) + url_path(parts->path);
}

}  // namespace

Result<std::optional<std::string>> ssh_url_of(std::string_view text) {
  for (const std::string_view alias : {"git+ssh://", "ssh+git://"}) {
    if (starts_with_nocase(text, alias)) return "ssh://" + std::string(text.substr(alias.size()));
  }
  if (starts_with_nocase(text, "ssh://")) return std::string(text);
  if (text.find("://") != std::string_view::npos) return std::nullopt;
  const auto colon = text.find(':');
  const auto slash = text.find('/');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && slash < colon)) return std::nullopt;
  auto url = scp_url(text);
  if (!url) return tl::unexpected(url.error());
  return std::optional<std::string>(std::move(*url));
}

}  // namespace courier::wire
