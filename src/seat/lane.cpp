// lane.cpp — remote URLs: syntax, the canonical remote and the lane key.
#include "seat/lane.hpp"

#include <cctype>
#include <cstdio>
#include <vector>

namespace courier::seat {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// RFC 3986 section 2.3: characters that mean the same encoded or not.
bool unreserved(unsigned char c) { return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }

int default_port(const std::string& scheme) {
  if (scheme == "https") return 443;
  if (scheme == "http") return 80;
  return 0;
}

std::string origin_of(const ParsedUrl& p) {
  std::string out = p.scheme + "://" + p.host;
  if (p.port != 0 && p.port != default_port(p.scheme)) out += ":" + std::to_string(p.port);
  return out;
}

// One path, read segment by segment: what a careful server would make of it,
// and why another server might make something else of it.
struct PathReading {
  std::string canonical;             // "/a/b", or "/" for the root
  std::vector<std::string> ambiguities;
  bool encoded_slash = false;        // no canonical form exists
  std::string malformed;             // a broken percent-escape
};

PathReading read_path(std::string_view path) {
  PathReading r;
  std::vector<std::string> out;
  std::size_t at = path.empty() ? 0 : 1;  // skip the leading '/'
  while (at <= path.size()) {
    const std::size_t end = std::min(path.find('/', at), path.size());
    const std::string_view raw = path.substr(at, end - at);
    const bool last = end == path.size();
    std::string seg;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '%') {
        seg.push_back(raw[i]);
        continue;
      }
      if (i + 2 >= raw.size() || hex_value(raw[i + 1]) < 0 || hex_value(raw[i + 2]) < 0) {
        r.malformed = "a '%' that is not followed by two hex digits";
        seg.push_back('%');
        continue;
      }
      const auto byte = static_cast<unsigned char>(hex_value(raw[i + 1]) * 16 + hex_value(raw[i + 2]));
      if (byte == '/') {
        r.encoded_slash = true;
        r.ambiguities.push_back("an encoded '/' (%2F), which some servers decode and others do not");
        seg += "%2F";
      } else if (unreserved(byte)) {
        r.ambiguities.push_back("'" + std::string(raw.substr(i, 3)) + "' is an encoded '" +
                                std::string(1, static_cast<char>(byte)) + "'");
        seg.push_back(static_cast<char>(byte));
      } else {
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02X", byte);
        seg += hex;
      }
      i += 2;
    }
    if (seg.empty()) {
      if (!last) r.ambiguities.push_back("an empty path segment ('//')");
    } else if (seg == ".") {
      r.ambiguities.push_back("a '.' path segment");
    } else if (seg == "..") {
      r.ambiguities.push_back("a '..' path segment");
      if (!out.empty()) out.pop_back();
    } else {
      out.push_back(std::move(seg));
    }
    if (last) break;
    at = end + 1;
  }
  for (const auto& s : out) r.canonical += "/" + s;
  if (r.canonical.empty()) r.canonical = "/";
  return r;
}

// The lane's view of a canonical path: every escape of a visible byte
// decoded, case folded, one trailing ".git" dropped.
std::string lane_path(const std::string& canonical) {
  std::string out;
  for (std::size_t i = 0; i < canonical.size(); ++i) {
    if (canonical[i] == '%' && i + 2 < canonical.size()) {
      const int byte = hex_value(canonical[i + 1]) * 16 + hex_value(canonical[i + 2]);
      if (byte > 0x20 && byte != 0x7f) {
        out.push_back(static_cast<char>(byte));
        i += 2;
        continue;
      }
    }
    out.push_back(canonical[i]);
  }
  out = lower(out);
  if (out.size() > 4 && out.compare(out.size() - 4, 4, ".git") == 0) out.resize(out.size() - 4);
  if (out.empty()) out = "/";
  return out;
}

}  // namespace

std::string redact_url(std::string_view url) {
  const auto sep = url.find("://");
  if (sep == std::string_view::npos) {
    // Not a URL we can take apart: an '@' may still follow a secret.
    const auto at = url.rfind('@');
    return at == std::string_view::npos ? std::string(url) : "***@" + std::string(url.substr(at + 1));
  }
  const std::string_view rest = url.substr(sep + 3);
  const auto slash = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, slash);
  const auto at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, sep + 3)) + "***@" + std::string(rest.substr(at + 1));
}

Result<ParsedUrl> parse_url(std::string_view url) {
  auto bad = [&](const std::string& why) {
    std::string shown;
    for (char c : redact_url(url)) {
      shown.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c);
    }
    return fail(Errc::invalid_argument, "malformed remote URL '" + shown + "': " + why);
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
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    p.userinfo = std::string(authority.substr(0, at));
    authority = authority.substr(at + 1);
  }
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
  } else {
    p.port = default_port(p.scheme);
  }
  return p;
}

Result<Remote> parse_remote(std::string_view url) {
  auto p = parse_url(url);
  if (!p) return tl::unexpected(p.error());
  Remote r;
  if (p->userinfo) {
    if (p->userinfo->find(':') != std::string::npos) {
      return fail(Errc::invalid_argument,
                  "remote URL '" + redact_url(url) +
                      "' carries a password: it would show in process lists, logs and outcomes. Remove it and "
                      "use --auth credential (git's credential helper) or --auth bearer:FILE");
    }
    if (!p->userinfo->empty()) r.user = *p->userinfo;
  }
  const PathReading path = read_path(p->path);
  const std::string origin = origin_of(*p);
  if (!path.malformed.empty()) {
    return fail(Errc::invalid_argument, "malformed remote URL '" + redact_url(url) + "': " + path.malformed);
  }
  if (!path.ambiguities.empty()) {
    std::string why;
    for (const auto& a : path.ambiguities) why += (why.empty() ? "" : "; ") + a;
    std::string msg = "remote URL '" + redact_url(url) + "' is ambiguous (" + why +
                      "): servers may resolve it to different repositories";
    msg += path.encoded_slash ? ", and it has no canonical spelling" : ". Write it as " + origin + path.canonical;
    return fail(Errc::invalid_argument, msg);
  }
  r.canonical = origin + path.canonical;
  std::string host = p->host;
  if (host.size() > 1 && host.back() == '.') host.pop_back();  // "h." and "h" are one DNS name
  ParsedUrl lane_origin = *p;
  lane_origin.host = host;
  r.lane = origin_of(lane_origin) + lane_path(path.canonical);
  return r;
}

Result<std::string> lane_key(std::string_view url) {
  auto r = parse_remote(url);
  if (!r) return tl::unexpected(r.error());
  return r->lane;
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
