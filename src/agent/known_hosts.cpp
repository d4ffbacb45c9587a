// known_hosts.cpp — the parent's known_hosts reader (known_hosts.hpp).
#include "agent/known_hosts.hpp"

#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>

#include "agent/ssh_text.hpp"
#include "sys/small_file.hpp"

namespace courier::agent {

namespace {

// A user's known_hosts grows with every host; a file past this is refused.
constexpr std::size_t kMaxKnownHostsFile = 4 * 1024 * 1024;

bool wildcard_match(std::string_view pat, std::string_view s) {
  std::size_t p = 0, i = 0, star = std::string_view::npos, mark = 0;
  while (i < s.size()) {
    if (p < pat.size() && (pat[p] == '?' || pat[p] == s[i])) {
      ++p;
      ++i;
    } else if (p < pat.size() && pat[p] == '*') {
      star = p++;
      mark = i;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "|1|salt|hash": HMAC-SHA1 of the name under the salt.
bool hashed_match(std::string_view entry, std::string_view name) {
  entry.remove_prefix(3);
  const auto bar = entry.find('|');
  if (bar == std::string_view::npos) return false;
  auto salt = base64_decode(entry.substr(0, bar));
  auto hash = base64_decode(entry.substr(bar + 1));
  if (!salt || !hash || hash->size() != 20) return false;
  unsigned char mac[20];
  unsigned len = 0;
  if (!HMAC(EVP_sha1(), salt->data(), static_cast<int>(salt->size()),
            reinterpret_cast<const unsigned char*>(name.data()), name.size(), mac, &len) ||
      len != 20) {
    return false;
  }
  return std::equal(mac, mac + 20, reinterpret_cast<const unsigned char*>(hash->data()));
}

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

struct Line {
  std::string_view marker;  // "", "@revoked", "@cert-authority"
  std::string_view hosts;
  std::string blob;  // empty when the key does not parse
};

std::optional<Line> parse_line(std::string_view text) {
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  auto f = fields_of(text);
  if (f.empty() || f[0][0] == '#') return std::nullopt;
  Line l;
  std::size_t at = 0;
  if (f[0][0] == '@') l.marker = f[at++];
  if (f.size() < at + 3) return std::nullopt;
  l.hosts = f[at];
  auto blob = base64_decode(f[at + 2]);
  if (blob && blob_algorithm(*blob) == f[at + 1]) l.blob = std::move(*blob);
  return l;
}

std::string port_of(const std::string& alias) {
  if (alias.empty() || alias[0] != '[') return "";
  const auto colon = alias.rfind("]:");
  return colon == std::string::npos ? "" : alias.substr(colon + 2);
}

std::string host_of(const std::string& alias) {
  if (alias.empty() || alias[0] != '[') return alias;
  const auto close = alias.rfind("]:");
  return close == std::string::npos ? alias : alias.substr(1, close - 1);
}

Error no_key(const std::string& alias, const std::string& file) {
  const std::string port = port_of(alias);
  return Error{Errc::invalid_argument, "no host key known for " + alias + " in " + file + "; add it with ssh-keyscan " +
                                           (port.empty() ? "" : "-p " + port + " ") + host_of(alias) + " >> " + file +
                                           " after checking its fingerprint"};
}

}  // namespace

std::string host_key_alias(const std::string& host, int port) {
  return port == 22 || port == 0 ? host : "[" + host + "]:" + std::to_string(port);
}

bool host_patterns_match(std::string_view patterns, std::string_view name) {
  bool matched = false;
  while (!patterns.empty()) {
    const auto comma = patterns.find(',');
    std::string_view pat = patterns.substr(0, comma);
    patterns = comma == std::string_view::npos ? std::string_view() : patterns.substr(comma + 1);
    const bool negated = !pat.empty() && pat[0] == '!';
    if (negated) pat.remove_prefix(1);
    const bool hit = pat.substr(0, 3) == "|1|" ? hashed_match(pat, name) : wildcard_match(lower(pat), name);
    if (hit && negated) return false;
    matched = matched || hit;
  }
  return matched;
}

Result<KnownHostKeys> known_host_keys(std::string_view text, const std::string& file, const std::string& alias) {
  KnownHostKeys out;
  out.alias = alias;
  const std::string name = lower(alias);
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const auto nl = text.find('\n');
    auto line = parse_line(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line || line->blob.empty()) continue;
    if (line->marker == "@revoked") {
      out.revoked.push_back(line->blob);
    } else if (!host_patterns_match(line->hosts, name)) {
      continue;
    } else if (line->marker == "@cert-authority") {
      return fail(Errc::invalid_argument, file + " line " + std::to_string(number) + " names " + alias +
                                              " with @cert-authority: git-courier does not accept host "
                                              "certificates; list the host's own key for " +
                                              alias + " instead");
    } else if (line->marker.empty()) {
      out.accepted.push_back(line->blob);
    }
  }
  // A revoked key is never accepted, whatever line lists it (A5).
  std::erase_if(out.accepted, [&](const std::string& b) {
    return std::find(out.revoked.begin(), out.revoked.end(), b) != out.revoked.end();
  });
  if (out.accepted.empty()) return tl::unexpected(no_key(alias, file));
  return out;
}

Result<KnownHostKeys> read_known_hosts(const std::string& file, const std::string& alias) {
  auto f = sys::read_small_regular_file(file, kMaxKnownHostsFile);
  if (!f) {
    if (f.error().message.find("no such file") != std::string::npos) return tl::unexpected(no_key(alias, file));
    return fail(Errc::invalid_argument, "known hosts file " + file + ": " + f.error().message);
  }
  return known_host_keys(f->bytes, file, alias);
}

std::string known_hosts_text(const KnownHostKeys& keys) {
  std::string out;
  for (const auto& b : keys.accepted) out += keys.alias + " " + public_line_of(b) + "\n";
  for (const auto& b : keys.revoked) out += "@revoked * " + public_line_of(b) + "\n";
  return out;
}

}  // namespace courier::agent
