// remote.cpp — the canonical remote, the lane key and the scheme rule.
#include "wire/remote.hpp"

#include <algorithm>
#include <vector>

namespace courier::wire {

namespace {

// One path, read segment by segment: what a careful server would make of it,
// and why another server might make something else of it.
struct PathReading {
  std::string canonical;  // "/a/b", or "/" for the root
  std::vector<std::string> ambiguities;
  bool encoded_slash = false;  // no canonical form exists
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
      // parse_url has checked that two hex digits follow.
      const auto byte = static_cast<unsigned char>(hex_digit_value(raw[i + 1]) * 16 + hex_digit_value(raw[i + 2]));
      if (byte == '/') {
        r.encoded_slash = true;
        r.ambiguities.push_back("an encoded '/' (%2F), which some servers decode and others do not");
        seg += "%2F";
      } else if (is_unreserved(static_cast<char>(byte))) {
        r.ambiguities.push_back("'" + std::string(raw.substr(i, 3)) + "' is an encoded '" +
                                std::string(1, static_cast<char>(byte)) + "'");
        seg.push_back(static_cast<char>(byte));
      } else {
        seg += percent_escape(static_cast<char>(byte));
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
      const int byte = hex_digit_value(canonical[i + 1]) * 16 + hex_digit_value(canonical[i + 2]);
      if (byte > 0x20 && byte != 0x7f) {
        out.push_back(static_cast<char>(byte));
        i += 2;
        continue;
      }
    }
    out.push_back(canonical[i]);
  }
  out = ascii_lower(out);
  if (out.size() > 4 && out.compare(out.size() - 4, 4, ".git") == 0) out.resize(out.size() - 4);
  if (out.empty()) out = "/";
  return out;
}

constexpr std::string_view kSupported = "only https:// (and http:// to loopback) are supported";

// A remote git can reach but git-courier does not speak to: another
// transport's URL (ssh://, git://, file://, ...), an scp-like ssh address
// ([user@]host:path, as git reads it: a ':' before any '/'), or a local
// path. Said as what it is, not as a malformed URL. Empty: none of these.
std::string unsupported_transport(std::string_view text) {
  const std::string shown = redact_url(text);
  if (const auto sep = text.find("://"); sep != std::string_view::npos && sep > 0) {
    const std::string scheme = ascii_lower(text.substr(0, sep));
    const bool word = std::all_of(scheme.begin(), scheme.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
    });
    if (word && scheme != "http" && scheme != "https") {
      return "remote '" + shown + "' uses " + scheme +
             "://, which git-courier does not speak: " + std::string(kSupported);
    }
    return "";
  }
  const auto colon = text.find(':');
  const auto slash = text.find('/');
  if (colon != std::string_view::npos && colon > 0 && (slash == std::string_view::npos || colon < slash)) {
    return "remote '" + shown + "' is an scp-like ssh address (host:path): " + std::string(kSupported);
  }
  if (!text.empty() && (text.front() == '/' || text.front() == '.' || text.front() == '~')) {
    return "remote '" + shown + "' is a local path: " + std::string(kSupported);
  }
  return "";
}

}  // namespace

Result<Remote> parse_remote(std::string_view url) {
  if (auto why = unsupported_transport(url); !why.empty()) return fail(Errc::invalid_argument, why);
  auto p = parse_url(url, "remote URL");
  if (!p) return tl::unexpected(p.error());
  if (p->query)
    return fail(Errc::invalid_argument, "malformed remote URL '" + redact_url(url) + "': a query is not allowed");
  // "https://tok/en@h/r" is host "tok" to libcurl and a token at "h" to its
  // writer: refused, so that no canonical remote (printed everywhere) can
  // hold what was meant as a secret.
  if (p->path.find('@') != std::string::npos) {
    return fail(Errc::invalid_argument, "remote URL '" + redact_url(url) +
                                            "' is ambiguous: an '@' in its path reads as user information to some "
                                            "programs; write it %40");
  }
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
  const std::string origin = p->origin();
  if (!path.ambiguities.empty()) {
    std::string why;
    for (const auto& a : path.ambiguities) why += (why.empty() ? "" : "; ") + a;
    std::string msg = "remote URL '" + redact_url(url) + "' is ambiguous (" + why +
                      "): servers may resolve it to different repositories";
    msg += path.encoded_slash ? ", and it has no canonical spelling" : ". Write it as " + origin + path.canonical;
    return fail(Errc::invalid_argument, msg);
  }
  r.canonical = origin + path.canonical;
  r.url = *p;
  r.url.userinfo.reset();
  r.url.path = path.canonical;
  Url lane_origin = *p;
  if (lane_origin.host.size() > 1 && lane_origin.host.back() == '.')
    lane_origin.host.pop_back();  // "h." and "h" are one DNS name
  r.lane = lane_origin.origin() + lane_path(path.canonical);
  return r;
}

Result<std::string> lane_key(std::string_view url) {
  auto r = parse_remote(url);
  if (!r) return tl::unexpected(r.error());
  return r->lane;
}

Result<void> check_scheme(const Url& url, bool allow_http_loopback) {
  if (url.scheme == "https") return {};
  if (url.scheme == "http") {
    if (!url.loopback()) {
      return fail(Errc::scheme_refused,
                  "plain http:// is refused for " + url.host + ": only https, or http to loopback");
    }
    if (!allow_http_loopback) {
      return fail(Errc::scheme_refused, "plain http:// to loopback needs allow_http_loopback (--allow-http-loopback)");
    }
    return {};
  }
  return fail(Errc::scheme_refused, "scheme '" + url.scheme + "' is not supported: " + std::string(kSupported));
}

}  // namespace courier::wire
