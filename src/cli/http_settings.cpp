// http_settings.cpp — trust and proxy from the command line, git's
// configuration and the environment (see http_settings.hpp for the
// precedence, which is git's, and docs/operations.md for users).
#include "cli/http_settings.hpp"

#include <cstdint>
#include <cstdlib>

#include "cli/url_match.hpp"
#include "wire/proxy.hpp"
#include "wire/remote.hpp"
#include "wire/url.hpp"

namespace courier::cli {

namespace {

// A non-empty value of the first of `names` that is set, the later names
// winning (git's var_override order: each one set replaces the one before).
// An empty value counts as set.
std::optional<std::pair<std::string, std::string>> last_set(const EnvLookup& env,
                                                            std::initializer_list<const char*> names) {
  std::optional<std::pair<std::string, std::string>> out;
  for (const char* n : names) {
    if (auto v = env(n)) out = std::pair<std::string, std::string>{n, *v};
  }
  return out;
}

// A path from git's configuration as git reads it (git_config_pathname):
// a leading "~/" is the home directory.
std::string config_path(const std::string& value, const EnvLookup& env) {
  if (value.rfind("~/", 0) == 0) {
    if (auto home = env("HOME")) return *home + value.substr(1);
  }
  return value;
}

// The configuration entry that decided an urlmatch key, for messages.
std::string urlmatch_source(const repo::GitConfig& config, const std::string& section, const std::string& key,
                            const std::string& value) {
  for (auto it = config.entries().rbegin(); it != config.entries().rend(); ++it) {
    const std::string& n = it->name;
    if (it->value == value && n.rfind(section + ".", 0) == 0 && n.size() > key.size() &&
        n.compare(n.size() - key.size() - 1, key.size() + 1, "." + key) == 0) {
      return n;
    }
  }
  return section + "." + key;
}

// Trust, key by key: --ca-file, GIT_SSL_CAINFO, http.<url>.sslCAInfo /
// http.sslCAInfo (one urlmatch), else the system store.
Result<void> resolve_trust(const repo::GitConfig& config, const std::string& url,
                           const std::optional<std::string>& ca_file_flag, const EnvLookup& env, HttpSettings& out) {
  if (ca_file_flag) {
    out.ca_file = *ca_file_flag;
    out.ca_source = "--ca-file";
    return {};
  }
  if (auto v = env("GIT_SSL_CAINFO"); v && !v->empty()) {
    out.ca_file = *v;
    out.ca_source = "GIT_SSL_CAINFO";
    return {};
  }
  auto configured = get_urlmatch(config, "http", "sslcainfo", url);
  if (!configured) return tl::unexpected(configured.error());
  if (*configured && !(*configured)->empty()) {
    out.ca_file = config_path(**configured, env);
    out.ca_source = urlmatch_source(config, "http", "sslcainfo", **configured);
  }
  return {};
}

// The proxy as git picks it (http.c's http_init and get_curl_handle), or
// none. Errors: those of get_urlmatch.
Result<void> pick_proxy(const repo::GitConfig& config, const wire::Url& remote, const std::string& url,
                        const std::optional<std::string>& remote_name, const EnvLookup& env, HttpSettings& out) {
  auto configured = get_urlmatch(config, "http", "proxy", url);
  if (!configured) return tl::unexpected(configured.error());
  if (*configured) {
    out.proxy = **configured;
    out.proxy_source = urlmatch_source(config, "http", "proxy", **configured);
  }
  if (remote_name) {
    const std::string key = "remote." + *remote_name + ".proxy";
    if (auto v = config.get(key)) {
      out.proxy = *v;
      out.proxy_source = key;
    }
  }
  if (!out.proxy) {
    auto from_env =
        remote.scheme == "https" ? last_set(env, {"HTTPS_PROXY", "https_proxy"}) : last_set(env, {"http_proxy"});
    if (!from_env) from_env = last_set(env, {"ALL_PROXY", "all_proxy"});
    if (from_env) {
      out.proxy = from_env->second;
      out.proxy_source = from_env->first;
    }
  }
  // An empty value, from whichever source, means no proxy at all.
  if (out.proxy && out.proxy->empty()) {
    out.proxy.reset();
    out.proxy_source.clear();
  }
  return {};
}

// git's proxy authentication method for this remote; only the ones a
// preemptive Basic header honours are accepted. Errors: invalid_argument.
Result<void> check_proxy_auth_method(const repo::GitConfig& config, const std::string& url,
                                     const std::optional<std::string>& remote_name, const EnvLookup& env) {
  auto method = get_urlmatch(config, "http", "proxyauthmethod", url);
  if (!method) return tl::unexpected(method.error());
  std::optional<std::string> value = *method;
  std::string source = "http.proxyAuthMethod";
  if (remote_name) {
    if (auto v = config.get("remote." + *remote_name + ".proxyauthmethod")) {
      value = *v;
      source = "remote." + *remote_name + ".proxyAuthMethod";
    }
  }
  if (auto v = env("GIT_HTTP_PROXY_AUTHMETHOD")) {
    value = *v;
    source = "GIT_HTTP_PROXY_AUTHMETHOD";
  }
  if (!value) return {};
  const std::string m = wire::ascii_lower(*value);
  if (m == "digest" || m == "negotiate" || m == "ntlm") {
    return fail(Errc::invalid_argument, source + "=" + *value +
                                            ": only Basic proxy authentication is supported (sent preemptively "
                                            "from the credentials in the proxy URL); digest, negotiate and ntlm "
                                            "are refused rather than bypassed");
  }
  return {};
}

// A dotted quad as a number, or nothing.
std::optional<std::uint32_t> ipv4(const std::string& s) {
  std::uint32_t out = 0;
  int parts = 0;
  std::size_t at = 0;
  while (parts < 4) {
    std::size_t end = s.find('.', at);
    if (end == std::string::npos) end = s.size();
    const std::string part = s.substr(at, end - at);
    if (part.empty() || part.size() > 3 || part.find_first_not_of("0123456789") != std::string::npos) return {};
    const int n = std::atoi(part.c_str());
    if (n > 255) return {};
    out = (out << 8) | static_cast<std::uint32_t>(n);
    ++parts;
    if (end == s.size()) break;
    at = end + 1;
  }
  if (parts != 4 || at > s.size()) return {};
  return out;
}

bool no_proxy_entry_matches(std::string host, std::string token) {
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') {
    return wire::ascii_lower(token) == host.substr(1, host.size() - 2);
  }
  if (auto address = ipv4(host)) {
    const auto slash = token.find('/');
    int bits = slash == std::string::npos ? 32 : std::atoi(token.c_str() + slash + 1);
    if (bits <= 0) bits = 32;  // libcurl: no bits, or 0, is the whole address
    if (bits > 32) return false;
    auto network = ipv4(token.substr(0, slash));
    if (!network) return false;
    const std::uint32_t mask = bits == 32 ? 0xffffffffu : ~(0xffffffffu >> bits);
    return (*address & mask) == (*network & mask);
  }
  if (!host.empty() && host.back() == '.') host.pop_back();
  if (!token.empty() && token.back() == '.') token.pop_back();
  if (!token.empty() && token.front() == '.') token.erase(0, 1);
  token = wire::ascii_lower(token);
  if (token.empty()) return false;
  if (token.size() == host.size()) return token == host;
  return token.size() < host.size() && host[host.size() - token.size() - 1] == '.' &&
         host.compare(host.size() - token.size(), token.size(), token) == 0;
}

}  // namespace

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

bool no_proxy_matches(const std::string& host, const std::string& no_proxy) {
  if (no_proxy == "*") return true;
  std::size_t at = 0;
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (at < no_proxy.size()) {
    while (at < no_proxy.size() && blank(no_proxy[at])) ++at;
    const std::size_t start = at;
    while (at < no_proxy.size() && !blank(no_proxy[at]) && no_proxy[at] != ',') ++at;
    if (at > start && no_proxy_entry_matches(host, no_proxy.substr(start, at - start))) return true;
    while (at < no_proxy.size() && blank(no_proxy[at])) ++at;
    // As libcurl: a list goes on only after a comma.
    if (at >= no_proxy.size() || no_proxy[at] != ',') break;
    while (at < no_proxy.size() && no_proxy[at] == ',') ++at;
  }
  return false;
}

Result<HttpSettings> resolve_http_settings(const repo::GitConfig& config, const std::string& url,
                                           const std::optional<std::string>& remote_name,
                                           const std::optional<std::string>& ca_file_flag, const EnvLookup& env) {
  auto remote = wire::parse_remote(url);
  if (!remote) return tl::unexpected(remote.error());
  return resolve_http_settings(config, *remote, remote_name, ca_file_flag, env);
}

Result<HttpSettings> resolve_http_settings(const repo::GitConfig& config, const wire::Remote& read,
                                           const std::optional<std::string>& remote_name,
                                           const std::optional<std::string>& ca_file_flag, const EnvLookup& env) {
  const wire::Remote* remote = &read;
  // git matches http.<url>.* against the URL with its user name, if any.
  const std::string match_url = remote->user ? remote->url.scheme + "://" + *remote->user + "@" +
                                                   remote->canonical.substr(remote->url.scheme.size() + 3)
                                             : remote->canonical;
  HttpSettings out;
  if (auto ok = resolve_trust(config, match_url, ca_file_flag, env, out); !ok) return tl::unexpected(ok.error());
  if (auto ok = pick_proxy(config, remote->url, match_url, remote_name, env, out); !ok) {
    return tl::unexpected(ok.error());
  }
  if (!out.proxy) return out;
  // NO_PROXY applies to a proxy from any source, as in git.
  if (auto no_proxy = last_set(env, {"NO_PROXY", "no_proxy"});
      no_proxy && no_proxy_matches(remote->url.host, no_proxy->second)) {
    out.proxy.reset();
    out.proxy_source.clear();
    return out;
  }
  if (auto parsed = wire::parse_proxy(*out.proxy); !parsed) {
    return fail(Errc::invalid_argument, out.proxy_source + ": " + parsed.error().message);
  }
  if (auto ok = check_proxy_auth_method(config, match_url, remote_name, env); !ok) return tl::unexpected(ok.error());
  return out;
}

}  // namespace courier::cli
