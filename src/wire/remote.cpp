// remote.cpp — the canonical remote, the lane key and the scheme rule.
#include "wire/remote.hpp"

#include <algorithm>
#include <vector>

#include "wire/ssh_spelling.hpp"

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

constexpr std::string_view kSupported = "only https:// (and http:// to loopback) and ssh are supported";

// A remote git can reach but git-courier does not speak to: another
// transport's URL (git://, file://, ...) or a local path. Said as what it
// is, not as a malformed URL. Empty: none of these. (SSH spellings, the
// scp-like one included, arrive here as ssh:// URLs: ssh_spelling.hpp.)
std::string unsupported_transport(std::string_view text) {
  const std::string shown = redact_url(text);
  if (const auto sep = text.find("://"); sep != std::string_view::npos && sep > 0) {
    const std::string scheme = ascii_lower(text.substr(0, sep));
    const bool word = std::all_of(scheme.begin(), scheme.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
    });
    if (word && scheme != "http" && scheme != "https" && scheme != "ssh") {
      return "remote '" + shown + "' uses " + scheme +
             "://, which git-courier does not speak: " + std::string(kSupported);
    }
    return "";
  }
  if (!text.empty() && (text.front() == '/' || text.front() == '.' || text.front() == '~')) {
    return "remote '" + shown + "' is a local path: " + std::string(kSupported);
  }
  return "";
}

// The user name of an ssh remote: what `ssh -l` gets and part of the lane,
// so one spelling only: letters, digits, '.', '_' and '-', not first
// (git refuses a host or user that reads as an option too).
std::string ssh_user_problem(const std::string& user) {
  if (user.empty()) return "an empty user name before '@'";
  if (user.front() == '-') return "a user name starting with '-'";
  for (const char c : user) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok)
      return "the character '" + std::string(1, c) +
             "' in the user name (write it plainly: letters, digits, '.', '_', '-')";
  }
  return {};
}

// What an ssh remote's path may not hold beyond what an https one may
// not: the root alone (no repository), and an escaped control byte (git
// would send it as it is written, a shell would see another path).
std::string ssh_path_problem(const std::string& canonical) {
  if (canonical == "/") return "no repository path";
  const std::string plain = percent_decode(canonical);
  for (const char c : plain) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "an escaped control character in the path";
  }
  return {};
}

// scheme://[user@]host[:port]: an ssh remote's user is part of it (H2).
std::string origin_of(const Url& u, const std::optional<std::string>& user) {
  if (u.scheme != "ssh" || !user) return u.origin();
  Url bare = u;
  bare.host = *user + "@" + u.host;
  return bare.origin();
}

// The user information: a password refused, an ssh user name checked.
Result<std::optional<std::string>> read_user(const Url& p, std::string_view text) {
  const bool ssh = p.scheme == "ssh";
  if (!p.userinfo) return std::optional<std::string>();
  if (p.userinfo->find(':') != std::string::npos) {
    return fail(Errc::invalid_argument,
                "remote URL '" + redact_url(text) +
                    "' carries a password: it would show in process lists, logs and outcomes. Remove it and " +
                    (ssh ? "use --auth ssh-key:FILE"
                         : "use --auth credential (git's credential helper) or --auth bearer:FILE"));
  }
  if (ssh) {
    if (auto why = ssh_user_problem(*p.userinfo); !why.empty()) {
      return fail(Errc::invalid_argument, "ssh remote '" + redact_url(text) + "': " + why);
    }
  }
  if (p.userinfo->empty()) return std::optional<std::string>();
  return std::optional<std::string>(*p.userinfo);
}

Result<Url> read_url(std::string_view text, const std::string& url, bool ssh) {
  if (auto why = unsupported_transport(url); !why.empty()) return fail(Errc::invalid_argument, why);
  auto p = parse_url(url, ssh ? "ssh remote" : "remote URL");
  if (!p) return tl::unexpected(p.error());
  if (p->query)
    return fail(Errc::invalid_argument, "malformed remote URL '" + redact_url(text) + "': a query is not allowed");
  // "https://tok/en@h/r" is host "tok" to libcurl and a token at "h" to its
  // writer: refused, so that no canonical remote (printed everywhere) can
  // hold what was meant as a secret.
  if (p->path.find('@') != std::string::npos) {
    return fail(Errc::invalid_argument, "remote URL '" + redact_url(text) +
                                            "' is ambiguous: an '@' in its path reads as user information to some "
                                            "programs; write it %40");
  }
  if (ssh && p->host.front() == '-') {
    return fail(Errc::invalid_argument, "ssh remote '" + redact_url(text) + "': a host starting with '-'");
  }
  return p;
}

}  // namespace

Result<Remote> parse_remote(std::string_view text) {
  auto ssh_url = ssh_url_of(text);
  if (!ssh_url) return tl::unexpected(ssh_url.error());
  const bool ssh = ssh_url->has_value();
  auto p = read_url(text, ssh ? **ssh_url : std::string(text), ssh);
  if (!p) return tl::unexpected(p.error());
  Remote r;
  auto user = read_user(*p, text);
  if (!user) return tl::unexpected(user.error());
  r.user = *user;
  const PathReading path = read_path(p->path);
  const std::string origin = origin_of(*p, r.user);
  if (!path.ambiguities.empty()) {
    std::string why;
    for (const auto& a : path.ambiguities) why += (why.empty() ? "" : "; ") + a;
    std::string msg = "remote URL '" + redact_url(text) + "' is ambiguous (" + why +
                      "): servers may resolve it to different repositories";
    msg += path.encoded_slash ? ", and it has no canonical spelling" : ". Write it as " + origin + path.canonical;
    return fail(Errc::invalid_argument, msg);
  }
  if (ssh) {
    if (auto why = ssh_path_problem(path.canonical); !why.empty()) {
      return fail(Errc::invalid_argument, "ssh remote '" + redact_url(text) + "': " + why);
    }
  }
  r.canonical = origin + path.canonical;
  r.url = *p;
  r.url.userinfo.reset();
  r.url.path = path.canonical;
  Url lane_origin = *p;
  if (lane_origin.host.size() > 1 && lane_origin.host.back() == '.')
    lane_origin.host.pop_back();  // "h." and "h" are one DNS name
  r.lane = origin_of(lane_origin, r.user) + lane_path(path.canonical);
  return r;
}

Result<std::string> lane_key(std::string_view url) {
  auto r = parse_remote(url);
  if (!r) return tl::unexpected(r.error());
  return r->lane;
}

std::string ssh_receive_pack_path(const Remote& remote) {
  std::string path = percent_decode(remote.url.path);
  // The home directory itself: sent relative, as git sends the scp-like
  // spelling that most remotes are written in ("owner/r.git"); a forge's
  // command wrapper may know no "~/".
  if (path.rfind("/~/", 0) == 0) return path.substr(3);
  if (path.size() > 1 && path[0] == '/' && path[1] == '~') path.erase(0, 1);
  return path;
}

std::optional<SshEndpoint> ssh_endpoint(const Remote& remote) {
  if (remote.url.scheme != "ssh") return std::nullopt;
  SshEndpoint e;
  e.user = remote.user.value_or("");
  e.host = remote.url.host;
  if (e.host.size() > 2 && e.host.front() == '[') e.host = e.host.substr(1, e.host.size() - 2);
  e.port = remote.url.port;
  e.port_given = remote.url.port_given;
  return e;
}

Result<void> check_scheme(const Url& url, bool allow_http_loopback) {
  if (url.scheme == "https" || url.scheme == "ssh") return {};
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
