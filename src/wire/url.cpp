// url.cpp — the RFC 3986 parser for http(s) URLs (see url.hpp for the
// narrowings and why).
#include "wire/url.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <vector>

namespace courier::wire {

namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return hex_digit_value(c) >= 0; }

// RFC 3986 section 2: sub-delims.
bool sub_delim(char c) { return c != '\0' && std::string_view("!$&'()*+,;=").find(c) != std::string_view::npos; }
bool pchar(char c) { return is_unreserved(c) || sub_delim(c) || c == ':' || c == '@'; }

// Every byte allowed by `ok`, every '%' the start of a two-digit escape.
// Returns what is wrong, or "".
template <class Allowed>
std::string check_chars(std::string_view part, std::string_view what, Allowed ok) {
  for (std::size_t i = 0; i < part.size(); ++i) {
    const char c = part[i];
    if (c == '%') {
      if (i + 2 >= part.size() || !is_hex(part[i + 1]) || !is_hex(part[i + 2])) {
        return "a '%' in the " + std::string(what) + " that is not followed by two hex digits";
      }
      i += 2;
      continue;
    }
    if (!ok(c)) return "the character '" + std::string(1, c) + "' is not allowed in the " + std::string(what);
  }
  return {};
}

// What inet_aton would read as an address: digits, hex, 'x' and dots, with a
// numeric last label. Such a host must be a plain dotted quad.
bool looks_numeric(std::string_view host) {
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  const auto dot = host.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? host : host.substr(dot + 1);
  if (last.empty() || !is_digit(last.front())) return false;
  for (char c : host) {
    if (!is_hex(c) && c != '.' && c != 'x' && c != 'X') return false;
  }
  return true;
}

bool dotted_quad(std::string_view host) {
  int parts = 0;
  std::size_t at = 0;
  while (at <= host.size()) {
    const std::size_t end = std::min(host.find('.', at), host.size());
    const std::string_view part = host.substr(at, end - at);
    if (part.empty() || part.size() > 3 || (part.size() > 1 && part.front() == '0')) return false;
    int n = 0;
    for (char c : part) {
      if (!is_digit(c)) return false;
      n = n * 10 + (c - '0');
    }
    if (n > 255) return false;
    ++parts;
    if (end == host.size()) break;
    at = end + 1;
  }
  return parts == 4;
}

std::string check_host(std::string_view host) {
  if (host.empty()) return "no host";
  if (host.front() == '[') {
    if (host.size() < 4 || host.back() != ']') return "a malformed IPv6 literal";
    for (char c : host.substr(1, host.size() - 2)) {
      if (!is_hex(c) && c != ':' && c != '.') return "an IPv6 literal may hold only hex digits, ':' and '.'";
    }
    return {};
  }
  for (char c : host) {
    if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '.' && c != '_') {
      return "the character '" + std::string(1, c) + "' is not allowed in a host name";
    }
  }
  if (looks_numeric(host) && !dotted_quad(host)) return "a numeric host must be written as a dotted quad (a.b.c.d)";
  return {};
}

// An IPv6 literal ("[...]") in its one RFC 5952 spelling: glibc's
// inet_ntop writes exactly that (lower-case hex, no leading zeros, the
// longest run of zero groups as "::"), so "[0:0:0:0:0:0:0:1]", "[::0:1]"
// and "[0000::0001]" all come out "[::1]" and get one lane. An IPv4-mapped
// address (::ffff:a.b.c.d) reaches the same host as a.b.c.d on a dual-stack
// socket, so it is refused with that spelling rather than given a lane of
// its own. Returns the spelling, or sets `problem`. Only a string
// conversion: inet_pton/inet_ntop make no system call.
std::string canonical_ipv6(std::string_view literal, std::string& problem) {
  const std::string inner(literal.substr(1, literal.size() - 2));
  in6_addr addr{};
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_pton(AF_INET6, inner.c_str(), &addr) != 1 || inet_ntop(AF_INET6, &addr, text, sizeof text) == nullptr) {
    problem = "a malformed IPv6 literal";
    return {};
  }
  if (IN6_IS_ADDR_V4MAPPED(&addr)) {
    const std::string_view v4 = std::string_view(text).substr(std::string_view("::ffff:").size());
    problem = "an IPv4-mapped IPv6 literal is the IPv4 address " + std::string(v4) + ": write it as " + std::string(v4);
    return {};
  }
  return "[" + std::string(text) + "]";
}

// Splits "host[:port]" (an IPv6 literal keeps its brackets).
struct HostPort {
  std::string_view host;
  std::optional<std::string_view> port;
  std::string problem;
};

HostPort split_host_port(std::string_view authority) {
  HostPort hp;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return HostPort{{}, {}, "an unterminated IPv6 literal"};
    hp.host = authority.substr(0, close + 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return HostPort{{}, {}, "junk after an IPv6 literal"};
      hp.port = after.substr(1);
    }
    return hp;
  }
  const auto colon = authority.find(':');
  hp.host = authority.substr(0, colon);
  if (colon != std::string_view::npos) hp.port = authority.substr(colon + 1);
  return hp;
}

// Digits only, 1..65535; an empty port means the default (RFC 3986 3.2.3).
Result<int> read_port(std::optional<std::string_view> text, std::string_view scheme) {
  if (!text || text->empty()) return default_port(scheme);
  if (text->size() > 5) return fail(Errc::invalid_argument, "bad port");
  int n = 0;
  for (char c : *text) {
    if (!is_digit(c)) return fail(Errc::invalid_argument, "bad port");
    n = n * 10 + (c - '0');
  }
  if (n <= 0 || n > 65535) return fail(Errc::invalid_argument, "bad port");
  return n;
}

}  // namespace

bool is_unreserved(char c) { return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~'; }

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_digit_value(s[i + 1]) >= 0 && hex_digit_value(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_digit_value(s[i + 1]) * 16 + hex_digit_value(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string form_decode(std::string_view s) {
  std::string spaced(s);
  std::replace(spaced.begin(), spaced.end(), '+', ' ');
  return percent_decode(spaced);
}

std::string percent_escape(char byte) { return "%" + to_hex(std::string_view(&byte, 1), HexCase::upper); }

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

int default_port(std::string_view scheme) {
  if (scheme == "https") return 443;
  if (scheme == "http") return 80;
  if (scheme == "ssh") return 22;
  return 0;
}

std::string Url::origin() const {
  std::string out = scheme + "://" + host;
  if (port != 0 && port != default_port(scheme)) out += ":" + std::to_string(port);
  return out;
}

std::string Url::without_userinfo() const {
  std::string out = origin() + path;
  if (query) out += "?" + *query;
  return out;
}

bool Url::loopback() const {
  if (host == "[::1]") return true;
  return host.rfind("127.", 0) == 0 && dotted_quad(host);
}

namespace {

// Where user information may be in `text`, read so that a secret is never
// missed: from after "://" to the LAST '@' of the text. A password may hold
// '/', '?' or '#' unencoded ("u:pa/ss@h", "u:p#w@h"), and a parser (ours,
// libcurl's) then ends the authority early and reads the rest as a path:
// cutting at the first of those would print the password. The cost is that
// a path or query holding '@' ("https://h/a@b") is hidden up to it too.
// Without "://": everything before the last '@'. nullopt: no '@'.
struct UserinfoSpan {
  std::size_t begin = 0;
  std::size_t at = 0;  // the '@'
};

std::optional<UserinfoSpan> userinfo_span(std::string_view text) {
  const auto sep = text.find("://");
  const std::size_t begin = sep == std::string_view::npos ? 0 : sep + 3;
  const auto at = text.rfind('@');
  if (at == std::string_view::npos || at < begin) return std::nullopt;
  return UserinfoSpan{begin, at};
}

// Every `password=` parameter's value (libpq's URLs take one in the query).
void redact_password_parameters(std::string& out) {
  const auto q = out.find('?');
  if (q == std::string::npos) return;
  constexpr std::string_view kHidden = "password=***";
  for (std::size_t at = q + 1; at < out.size();) {
    std::size_t end = std::min(out.find('&', at), out.size());
    const std::string_view pair(out.data() + at, end - at);
    if (ascii_lower(pair.substr(0, pair.find('='))) == "password") {
      out.replace(at, end - at, kHidden);
      end = at + kHidden.size();
    }
    at = end + 1;
  }
}

}  // namespace

std::string redact_url(std::string_view text, Redact what) {
  std::string shown(text);
  if (const auto span = userinfo_span(text)) {
    if (what == Redact::userinfo) {
      shown.replace(span->begin, span->at - span->begin, "***");
    } else if (const auto colon = shown.find(':', span->begin); colon != std::string::npos && colon < span->at) {
      shown.replace(colon + 1, span->at - colon - 1, "***");
    }
  }
  redact_password_parameters(shown);
  for (auto& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return shown;
}

bool carries_password(std::string_view text) {
  std::string plain(text);
  for (auto& c : plain) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return redact_url(text, Redact::password) != plain;
}

Result<Url> parse_url(std::string_view text, std::string_view what) {
  auto bad = [&](const std::string& why) {
    return fail(Errc::invalid_argument, "malformed " + std::string(what) + " '" + redact_url(text) + "': " + why);
  };
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return bad("it contains whitespace or control characters");
    if (u >= 0x80) return bad("it contains a byte outside ASCII (percent-encode it)");
  }
  const auto sep = text.find("://");
  if (sep == std::string_view::npos || sep == 0) return bad("no scheme");
  Url u;
  u.scheme = ascii_lower(text.substr(0, sep));
  if (!is_alpha(u.scheme.front())) return bad("bad scheme");
  for (char c : u.scheme) {
    if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') return bad("bad scheme");
  }
  std::string_view rest = text.substr(sep + 3);
  if (rest.find('#') != std::string_view::npos) return bad("a fragment is not allowed");
  if (const auto q = rest.find('?'); q != std::string_view::npos) {
    u.query = std::string(rest.substr(q + 1));
    rest = rest.substr(0, q);
    if (auto why = check_chars(*u.query, "query", [](char c) { return pchar(c) || c == '/' || c == '?'; });
        !why.empty()) {
      return bad(why);
    }
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  u.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (auto why = check_chars(u.path, "path", [](char c) { return pchar(c) || c == '/'; }); !why.empty()) {
    return bad(why);
  }
  if (const auto at = authority.find('@'); at != std::string_view::npos) {
    const std::string_view info = authority.substr(0, at);
    authority = authority.substr(at + 1);
    if (authority.find('@') != std::string_view::npos) return bad("an '@' in user information must be written %40");
    if (auto why =
            check_chars(info, "user information", [](char c) { return is_unreserved(c) || sub_delim(c) || c == ':'; });
        !why.empty()) {
      return bad("malformed user information");
    }
    u.userinfo = std::string(info);
  }
  const HostPort hp = split_host_port(authority);
  if (!hp.problem.empty()) return bad(hp.problem);
  if (auto why = check_host(hp.host); !why.empty()) return bad(why);
  u.host = ascii_lower(hp.host);
  if (u.host.front() == '[') {
    std::string problem;
    u.host = canonical_ipv6(u.host, problem);
    if (!problem.empty()) return bad(problem);
  }
  auto port = read_port(hp.port, u.scheme);
  if (!port) return bad(port.error().message);
  u.port = *port;
  u.port_given = hp.port && !hp.port->empty();
  return u;
}

}  // namespace courier::wire
