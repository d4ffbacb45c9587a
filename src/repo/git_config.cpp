// git_config.cpp — git's configuration read with libgit2, one file at a
// time so that the order of entries is git's (system, XDG, global, the
// repository, then the command-line parameters and GIT_CONFIG_COUNT).
// init_libgit2() blanks libgit2's own search paths (so the child and the
// pack read nothing outside the repository); this reader names the files
// itself instead.
#include "repo/git_config.hpp"

#include <git2.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "repo/repository.hpp"

namespace courier::repo {

namespace {

struct ConfigDeleter {
  void operator()(git_config* c) const { git_config_free(c); }
};
using Config = std::unique_ptr<git_config, ConfigDeleter>;

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// git's rule for GIT_CONFIG_NOSYSTEM and friends: a boolean word.
bool env_true(const char* name) {
  auto v = env(name);
  if (!v) return false;
  std::string s;
  for (char c : *v) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

// A file the user keeps (their own configuration): followed like git does.
bool is_regular_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

// The files before the repository's own, in git's order.
std::vector<std::pair<std::string, git_config_level_t>> outer_files() {
  std::vector<std::pair<std::string, git_config_level_t>> files;
  if (!env_true("GIT_CONFIG_NOSYSTEM")) {
    files.emplace_back(env("GIT_CONFIG_SYSTEM").value_or("/etc/gitconfig"), GIT_CONFIG_LEVEL_SYSTEM);
  }
  if (auto global = env("GIT_CONFIG_GLOBAL")) {
    files.emplace_back(*global, GIT_CONFIG_LEVEL_GLOBAL);
    return files;
  }
  // $HOME only, as git: without it there is no global file.
  std::optional<std::string> home = env("HOME");
  if (home && home->empty()) home.reset();
  if (auto xdg = env("XDG_CONFIG_HOME"); xdg && !xdg->empty()) {
    files.emplace_back(*xdg + "/git/config", GIT_CONFIG_LEVEL_XDG);
  } else if (home) {
    files.emplace_back(*home + "/.config/git/config", GIT_CONFIG_LEVEL_XDG);
  }
  if (home) files.emplace_back(*home + "/.gitconfig", GIT_CONFIG_LEVEL_GLOBAL);
  return files;
}

// Appends one file's entries, in file order (includes where they appear).
// A missing file is no error, as in git. Errors: os_error.
Result<void> append_file(std::vector<ConfigEntry>& out, const std::string& path, git_config_level_t level,
                         const git_repository* repo) {
  if (path.empty() || !is_regular_file(path)) return {};
  git_config* raw = nullptr;
  if (git_config_new(&raw) != 0) return tl::unexpected(git_failure("reading git configuration"));
  Config cfg(raw);
  if (git_config_add_file_ondisk(cfg.get(), path.c_str(), level, repo, 0) != 0) {
    return tl::unexpected(git_failure("reading git configuration " + path));
  }
  auto collect = [](const git_config_entry* e, void* payload) -> int {
    static_cast<std::vector<ConfigEntry>*>(payload)->push_back(
        ConfigEntry{e->name, e->value != nullptr ? e->value : ""});
    return 0;
  };
  if (git_config_foreach(cfg.get(), collect, &out) != 0) {
    return tl::unexpected(git_failure("reading git configuration " + path));
  }
  return {};
}

// GIT_CONFIG_COUNT with its GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n. Errors:
// invalid_argument (a count or a key that git would refuse too).
Result<void> append_counted(std::vector<ConfigEntry>& out) {
  auto count = env("GIT_CONFIG_COUNT");
  if (!count || count->empty()) return {};
  char* end = nullptr;
  const long n = std::strtol(count->c_str(), &end, 10);
  if (*end != '\0' || n < 0 || n > 10'000) return fail(Errc::invalid_argument, "bogus GIT_CONFIG_COUNT");
  for (long i = 0; i < n; ++i) {
    auto key = env(("GIT_CONFIG_KEY_" + std::to_string(i)).c_str());
    auto value = env(("GIT_CONFIG_VALUE_" + std::to_string(i)).c_str());
    if (!key || key->empty() || !value) {
      return fail(Errc::invalid_argument, "missing config key or value GIT_CONFIG_KEY_" + std::to_string(i));
    }
    out.push_back(ConfigEntry{canonical_config_name(*key), *value});
  }
  return {};
}

// One single-quoted word of GIT_CONFIG_PARAMETERS starting at text[i]
// ('it'\''s' is "it's"). Errors: invalid_argument.
Result<std::string> quoted_word(const std::string& text, std::size_t& i) {
  std::string word;
  while (i < text.size() && text[i] == '\'') {
    const std::size_t close = text.find('\'', i + 1);
    if (close == std::string::npos) return fail(Errc::invalid_argument, "bogus GIT_CONFIG_PARAMETERS: unclosed quote");
    word += text.substr(i + 1, close - i - 1);
    i = close + 1;
    if (i + 1 < text.size() && text[i] == '\\' && text[i + 1] == '\'') {
      word.push_back('\'');
      i += 2;
    } else {
      break;
    }
  }
  return word;
}

}  // namespace

std::string canonical_config_name(const std::string& name) {
  const std::size_t first = name.find('.');
  const std::size_t last = name.rfind('.');
  std::string out = name;
  auto lower = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.size(); ++k) {
      out[k] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[k])));
    }
  };
  if (first == std::string::npos) {
    lower(0, out.size());
    return out;
  }
  lower(0, first);
  lower(last, out.size());
  return out;
}

Result<std::vector<ConfigEntry>> parse_config_parameters(const std::string& text) {
  std::vector<ConfigEntry> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    if (text[i] != '\'') return fail(Errc::invalid_argument, "bogus GIT_CONFIG_PARAMETERS: expected a quote");
    auto first = quoted_word(text, i);
    if (!first) return tl::unexpected(first.error());
    if (i < text.size() && text[i] == '=') {  // 'key'='value' (git 2.31 and later)
      ++i;
      std::string value;
      if (i < text.size() && text[i] == '\'') {
        auto v = quoted_word(text, i);
        if (!v) return tl::unexpected(v.error());
        value = *v;
      }
      out.push_back(ConfigEntry{canonical_config_name(*first), value});
      continue;
    }
    // 'key=value' (older git): the first '=' splits.
    const std::size_t eq = first->find('=');
    if (eq == std::string::npos) {
      out.push_back(ConfigEntry{canonical_config_name(*first), "true"});
    } else {
      out.push_back(ConfigEntry{canonical_config_name(first->substr(0, eq)), first->substr(eq + 1)});
    }
  }
  return out;
}

Result<GitConfig> GitConfig::open(const std::string& repo_path) {
  auto repo = open_repo(repo_path);
  if (!repo) return tl::unexpected(repo.error());
  std::vector<ConfigEntry> entries;
  for (const auto& [path, level] : outer_files()) {
    if (auto ok = append_file(entries, path, level, repo->get()); !ok) return tl::unexpected(ok.error());
  }
  const char* common = git_repository_commondir(repo->get());
  if (common != nullptr) {
    std::string local = std::string(common);
    if (!local.empty() && local.back() != '/') local.push_back('/');
    if (auto ok = append_file(entries, local + "config", GIT_CONFIG_LEVEL_LOCAL, repo->get()); !ok) {
      return tl::unexpected(ok.error());
    }
  }
  if (auto params = env("GIT_CONFIG_PARAMETERS"); params && !params->empty()) {
    auto parsed = parse_config_parameters(*params);
    if (!parsed) return tl::unexpected(parsed.error());
    entries.insert(entries.end(), parsed->begin(), parsed->end());
  }
  if (auto ok = append_counted(entries); !ok) return tl::unexpected(ok.error());
  return GitConfig(std::move(entries));
}

std::optional<std::string> GitConfig::get(const std::string& name) const {
  const std::string want = canonical_config_name(name);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->name == want) return it->value;
  }
  return std::nullopt;
}

}  // namespace courier::repo
