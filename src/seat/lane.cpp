// lane.cpp — lane keys from remote URLs.
#include "seat/lane.hpp"

#include <cctype>
#include <cstdio>

namespace courier::seat {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Result<ParsedUrl> parse_url(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return fail(Errc::invalid_argument, "malformed remote URL '" + std::string(url) + "': " + why);
  };
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return bad("it contains whitespace or control characters");
  }
  const auto sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0) return bad("no scheme");
  ParsedUrl p;
  p.scheme = lower(url.substr(0, sep));
  for (char c : p.scheme) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return bad("bad scheme");
  }
  std::string_view rest = url.substr(sep + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) return bad("a query or fragment is not allowed");
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  p.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) authority = authority.substr(at + 1);
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return bad("unterminated IPv6 literal");
    host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after IPv6 literal");
      port = after.substr(1);
    }
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return bad("no host");
  p.host = lower(host);
  if (!port.empty()) {
    if (port.size() > 5) return bad("bad port");
    int n = 0;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return bad("bad port");
      n = n * 10 + (c - '0');
    }
    if (n <= 0 || n > 65535) return bad("bad port");
    p.port = n;
  } else if (p.scheme == "https") {
    p.port = 443;
  } else if (p.scheme == "http") {
    p.port = 80;
  }
  return p;
}

Result<std::string> lane_key(std::string_view url) {
  auto p = parse_url(url);
  if (!p) return tl::unexpected(p.error());
  std::string key = p->scheme + "://" + p->host;
  const bool default_port = (p->scheme == "https" && p->port == 443) || (p->scheme == "http" && p->port == 80);
  if (!default_port && p->port != 0) key += ":" + std::to_string(p->port);
  std::string path = p->path;
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".git") == 0) path.resize(path.size() - 4);
  if (path.empty()) path = "/";
  return key + path;
}

std::string lane_lock_name(const std::string& key) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  std::string readable;
  for (char c : key) {
    readable.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    if (readable.size() >= 80) break;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return readable + "-" + hex + ".lock";
}

}  // namespace courier::seat
