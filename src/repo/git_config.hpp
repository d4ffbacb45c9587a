// git_config.hpp — git's configuration as a git command run in the
// repository would see it, read once in the parent with libgit2 and kept as
// an ordered list of entries (later ones win, as in git).
//
// Read, in git's order: the system file ($GIT_CONFIG_SYSTEM or
// /etc/gitconfig, skipped with GIT_CONFIG_NOSYSTEM), the XDG file
// ($XDG_CONFIG_HOME/git/config or ~/.config/git/config) and ~/.gitconfig —
// both replaced by $GIT_CONFIG_GLOBAL when it is set —, the repository's own
// file, then GIT_CONFIG_PARAMETERS (`git -c k=v courier ...`) and
// GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n. Includes are
// followed by libgit2. Nothing here reaches the child (A1): callers turn
// what they read into job fields.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "courier/result.hpp"

namespace courier::repo {

struct ConfigEntry {
  // As git prints it with `git config --list`: section and key lowercased,
  // a subsection kept as written ("remote.Origin.url" keeps "Origin";
  // "http.https://Host/.sslcainfo" keeps the URL).
  std::string name;
  std::string value;
};

class GitConfig {
 public:
  // Errors: invalid_argument (not a repository), os_error (a configuration
  // file that exists could not be parsed).
  static Result<GitConfig> open(const std::string& repo);
  // From entries, in order (tests, and callers that have no repository).
  explicit GitConfig(std::vector<ConfigEntry> entries) : entries_(std::move(entries)) {}

  // The last value of `name` (case as in ConfigEntry::name), as
  // `git config --get` gives it.
  std::optional<std::string> get(const std::string& name) const;
  // Every entry, in the order git would apply them.
  const std::vector<ConfigEntry>& entries() const { return entries_; }

 private:
  std::vector<ConfigEntry> entries_;
};

// The canonical spelling of a key as given by a user ("Remote.Origin.URL"
// → "remote.Origin.url"): section and last part lowercased. Pure.
std::string canonical_config_name(const std::string& name);

// GIT_CONFIG_PARAMETERS as git writes it ('k'='v' 'k2'='v2', or the older
// 'k=v'). Errors: invalid_argument (malformed quoting).
Result<std::vector<ConfigEntry>> parse_config_parameters(const std::string& text);

}  // namespace courier::repo
