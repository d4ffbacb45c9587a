// remote_name.cpp — `--remote` as git reads it: a URL, or a configured
// remote's push URL, rewritten by url.<base>.insteadOf / pushInsteadOf.
#include "cli/remote_name.hpp"

#include "wire/url.hpp"

namespace courier::cli {

namespace {

constexpr std::string_view kUrlSection = "url.";

// git's alias_url: the value of the longest `url.<base>.<key>` that is a
// prefix of url replaced by its base; nullopt when none matches.
std::optional<std::string> rewrite(const repo::GitConfig& config, const std::string& key, const std::string& url) {
  const std::string suffix = "." + key;
  std::optional<std::string> best;
  std::size_t best_len = 0;
  for (const auto& e : config.entries()) {
    if (e.name.size() <= kUrlSection.size() + suffix.size() || e.name.rfind(kUrlSection, 0) != 0) continue;
    if (e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    if (e.value.empty() || url.rfind(e.value, 0) != 0 || e.value.size() <= best_len) continue;
    const std::string base = e.name.substr(kUrlSection.size(), e.name.size() - kUrlSection.size() - suffix.size());
    best = base + url.substr(e.value.size());
    best_len = e.value.size();
  }
  return best;
}

// A push URL as git makes it from a configured or given url: pushInsteadOf
// first, else insteadOf, else as it is.
std::string push_url_from_url(const repo::GitConfig& config, const std::string& url) {
  if (auto pushed = rewrite(config, "pushinsteadof", url)) return *pushed;
  return rewrite(config, "insteadof", url).value_or(url);
}

// A remote's name is one component of a ref name (git checks
// refs/remotes/<name>/...): no ':' or '/', no space, control character or
// any of ~^?*[\ and not "." or "..". Anything else on --remote is a URL.
bool could_be_remote_name(const std::string& word) {
  if (word.empty() || word == "." || word == "..") return false;
  for (const char c : word) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f || std::string_view(":/~^?*[\\").find(c) != std::string_view::npos) return false;
  }
  return true;
}

std::string listed(const std::vector<std::string>& urls) {
  std::string out;
  for (const auto& u : urls) out += (out.empty() ? "" : ", ") + wire::redact_url(u);
  return out;
}

}  // namespace

std::vector<std::string> config_list(const repo::GitConfig& config, const std::string& name) {
  const std::string want = repo::canonical_config_name(name);
  std::vector<std::string> values;
  for (const auto& e : config.entries()) {
    if (e.name != want) continue;
    if (e.value.empty())
      values.clear();
    else
      values.push_back(e.value);
  }
  return values;
}

Result<ResolvedRemote> resolve_remote(const std::string& word, const repo::GitConfig& config) {
  const std::string section = "remote." + word;
  std::vector<std::string> urls;
  for (const auto& u : config_list(config, section + ".pushurl"))
    urls.push_back(rewrite(config, "insteadof", u).value_or(u));
  const char* key = "pushurl";
  if (urls.empty()) {
    key = "url";
    for (const auto& u : config_list(config, section + ".url")) urls.push_back(push_url_from_url(config, u));
  }
  // Not a configured remote: a URL (the caller's parse_remote judges it),
  // or, when it could be a remote's name, a name nobody configured.
  if (urls.empty() && !could_be_remote_name(word)) {
    return ResolvedRemote{std::nullopt, push_url_from_url(config, word)};
  }
  if (urls.empty()) {
    return fail(Errc::invalid_argument,
                "'" + word +
                    "' does not appear to be a git repository: it is not a URL, and no "
                    "remote." +
                    word + ".url or remote." + word +
                    ".pushurl is configured (give an https:// or ssh remote, or a remote's name)");
  }
  if (urls.size() > 1) {
    return fail(Errc::invalid_argument, "remote '" + word + "' has " + std::to_string(urls.size()) + " push URLs (" +
                                            section + "." + key + ": " + listed(urls) +
                                            "); git pushes to each, this command delivers to one: give the URL");
  }
  return ResolvedRemote{word, urls.front()};
}

}  // namespace courier::cli
