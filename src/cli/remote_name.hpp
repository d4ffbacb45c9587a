// remote_name.hpp — what `--remote` names, as `git push` reads it: a URL,
// or the name of a remote configured in git's configuration
// (`remote.<name>.pushurl`, else `remote.<name>.url`), with git's URL
// rewriting (`url.<base>.insteadOf`, and `url.<base>.pushInsteadOf` for a
// remote without a pushurl) applied either way. The remote's name, when
// there is one, stays available for the settings keyed by it
// (`remote.<name>.proxy`, `remote.<name>.fetch`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "courier/result.hpp"
#include "repo/git_config.hpp"

namespace courier::cli {

struct ResolvedRemote {
  std::optional<std::string> name;  // the configured remote's name; nullopt: --remote was a URL
  std::string url;                  // the URL to push to, rewritten as git would (not yet checked: wire::parse_remote)
};

// As in git, a configured remote of that name (one with a pushurl or url)
// comes first; otherwise a word that could not be a remote's name (one
// with ':', '/', a space, ...) is a URL, and any other word is an error. git pushes to
// every pushurl (or every url) of a remote; this command delivers to one,
// so a remote with several is refused, naming them (redacted). Errors:
// invalid_argument ("'foo' does not appear to be a git repository", as git
// says, when the word is neither; several push URLs).
Result<ResolvedRemote> resolve_remote(const std::string& word, const repo::GitConfig& config);

// The values of a multi-valued key, in git's order; an empty value clears
// the ones before it (as git does for remote URLs since 2.46).
std::vector<std::string> config_list(const repo::GitConfig& config, const std::string& name);

}  // namespace courier::cli
