// url_match.cpp — git's http.<url>.* matching (see url_match.hpp for the
// rules; they follow git's urlmatch.c, and tests/integration/http-config.cpp holds
// them against `git config --get-urlmatch`).
#include "cli/url_match.hpp"

#include <string_view>
#include <vector>

#include "wire/url.hpp"

namespace courier::cli {

namespace {

// A host label "*" stands in for any one label. The URL parser accepts no
// '*', so the pattern's wildcard labels are spelled with this label while
// it is parsed (a name no real host uses: it holds "--" and a '_').
constexpr std::string_view kWildcardLabel = "wildcard--_";

// How specific a match is, compared as git's cmp_matches does.
struct Specificity {
  std::size_t host = 0;  // the pattern's host as written ("*" counts 1)
  std::size_t path = 0;  // the path match's length, its final '/' included
  bool user = false;     // the pattern named the user
};

// -1, 0 or 1 as `a` is less, as, or more specific than `b`.
int compare(const Specificity& a, const Specificity& b) {
  if (a.host != b.host) return a.host < b.host ? -1 : 1;
  if (a.path != b.path) return a.path < b.path ? -1 : 1;
  if (a.user != b.user) return b.user ? -1 : 1;
  return 0;
}

// git's path normalisation: escapes of unreserved characters decoded,
// other escapes' hex upper-cased, "." and ".." segments resolved.
std::string normalise_path(std::string_view path) {
  std::string decoded;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size()) {
      const int hi = wire::hex_digit_value(path[i + 1]);
      const int lo = wire::hex_digit_value(path[i + 2]);
      const char c = static_cast<char>(hi * 16 + lo);
      if (wire::is_unreserved(c)) {
        decoded.push_back(c);
      } else {
        decoded += wire::percent_escape(c);
      }
      i += 2;
      continue;
    }
    decoded.push_back(path[i]);
  }
  std::vector<std::string> segments;
  std::size_t at = 1;  // the path starts with '/'
  while (at <= decoded.size()) {
    const std::size_t end = std::min(decoded.find('/', at), decoded.size());
    const std::string seg = decoded.substr(at, end - at);
    const bool last = end == decoded.size();
    if (seg == "..") {
      if (!segments.empty()) segments.pop_back();
      if (last) segments.emplace_back();
    } else if (seg == ".") {
      if (last) segments.emplace_back();
    } else {
      segments.push_back(seg);
    }
    at = end + 1;
  }
  std::string out;
  for (const auto& s : segments) out += "/" + s;
  return out.empty() ? "/" : out;
}

// git's url_match_prefix: the length of the match (its final '/' counted
// even when implicit), or 0 when `prefix` is not a prefix of `path` ending
// on a '/' boundary.
std::size_t path_match(std::string_view path, std::string_view prefix) {
  if (prefix.empty() || prefix == "/") return path.empty() || path.front() == '/' ? 1 : 0;
  if (prefix.back() == '/') prefix.remove_suffix(1);
  if (path.substr(0, prefix.size()) != prefix) return 0;
  if (path.size() == prefix.size() || path[prefix.size()] == '/') return prefix.size() + 1;
  return 0;
}

std::vector<std::string_view> labels(std::string_view host) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t dot = host.find('.', at);
    out.push_back(host.substr(at, dot == std::string_view::npos ? std::string_view::npos : dot - at));
    if (dot == std::string_view::npos) return out;
    at = dot + 1;
  }
}

// git's match_host: label by label, a pattern label "*" matching any one.
bool host_matches(std::string_view host, std::string_view pattern) {
  const auto h = labels(host);
  const auto p = labels(pattern);
  if (h.size() != p.size()) return false;
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (p[i] != kWildcardLabel && p[i] != h[i]) return false;
  }
  return true;
}

// The pattern with each whole "*" host label replaced by kWildcardLabel,
// so that the one URL parser can read it; the count of replacements.
std::string spell_wildcards(std::string_view pattern, std::size_t& count) {
  std::string out;
  const std::size_t start = pattern.find("://");
  if (start == std::string_view::npos) return std::string(pattern);
  const std::size_t host_end = std::min(pattern.find_first_of("/?", start + 3), pattern.size());
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const bool in_host = i >= start + 3 && i < host_end;
    const char before = i > 0 ? pattern[i - 1] : '\0';
    const char after = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    const bool label_start = i == start + 3 || before == '.' || before == '@';
    const bool label_end = i + 1 == host_end || after == '.' || after == ':';
    if (in_host && pattern[i] == '*' && label_start && label_end) {
      out += kWildcardLabel;
      ++count;
    } else {
      out.push_back(pattern[i]);
    }
  }
  return out;
}

std::optional<std::string> user_of(const wire::Url& u) {
  if (!u.userinfo) return std::nullopt;
  return u.userinfo->substr(0, u.userinfo->find(':'));
}

// How specifically `pattern` matches `target`, or nothing when it does not.
std::optional<Specificity> match(const wire::Url& target, std::string_view pattern_text) {
  std::size_t wildcards = 0;
  auto pattern = wire::parse_url(spell_wildcards(pattern_text, wildcards));
  if (!pattern || pattern->scheme != target.scheme) return std::nullopt;
  Specificity s;
  if (auto user = user_of(*pattern)) {
    if (user_of(target) != user) return std::nullopt;
    s.user = true;
  }
  if (!host_matches(target.host, pattern->host) || pattern->port != target.port) return std::nullopt;
  s.path = path_match(normalise_path(target.path), normalise_path(pattern->path));
  if (s.path == 0) return std::nullopt;
  s.host = pattern->host.size() - wildcards * (kWildcardLabel.size() - 1);
  return s;
}

}  // namespace

Result<std::optional<std::string>> get_urlmatch(const repo::GitConfig& config, const std::string& section,
                                                const std::string& key, const std::string& url) {
  auto target = wire::parse_url(url);
  if (!target) return tl::unexpected(target.error());
  const std::string plain = section + "." + key;
  std::optional<std::string> value;
  Specificity best;
  for (const auto& e : config.entries()) {
    Specificity here;
    if (e.name != plain) {
      // section.<pattern>.key: the pattern is everything between.
      const std::string head = section + ".";
      const std::string tail = "." + key;
      if (e.name.size() <= head.size() + tail.size() || e.name.compare(0, head.size(), head) != 0 ||
          e.name.compare(e.name.size() - tail.size(), tail.size(), tail) != 0) {
        continue;
      }
      auto m = match(*target, std::string_view(e.name).substr(head.size(), e.name.size() - head.size() - tail.size()));
      if (!m) continue;
      here = *m;
    }
    // Less specific than what is held: skipped; as specific or more: the
    // later entry wins, as in git.
    if (compare(here, best) < 0) continue;
    best = here;
    value = e.value;
  }
  return value;
}

}  // namespace courier::cli
