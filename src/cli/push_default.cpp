// push_default.cpp — the remote and the refspec of a `git push` that names
// neither, as git's builtin/push.c and remote.c decide them (see
// push_default.hpp).
#include "cli/push_default.hpp"

#include <set>

#include "cli/refspec.hpp"
#include "cli/remote_name.hpp"

namespace courier::cli {

namespace {

std::string short_branch(const std::string& full) { return full.substr(std::string_view("refs/heads/").size()); }

// Every configured remote's name (remote.<name>.<key>), as git counts them.
std::set<std::string> configured_remotes(const repo::GitConfig& config) {
  std::set<std::string> names;
  for (const auto& e : config.entries()) {
    if (e.name.rfind("remote.", 0) != 0) continue;
    const std::size_t last = e.name.rfind('.');
    if (last > 7) names.insert(e.name.substr(7, last - 7));
  }
  return names;
}

// git's remote_for_branch: branch.<name>.remote, else the only remote,
// else origin.
std::string remote_for_branch(const repo::GitConfig& config, const std::optional<std::string>& branch) {
  if (branch) {
    if (auto r = config.get("branch." + short_branch(*branch) + ".remote"); r && !r->empty()) return *r;
  }
  const auto remotes = configured_remotes(config);
  if (remotes.size() == 1) return *remotes.begin();
  return "origin";
}

bool config_true(const std::optional<std::string>& v) {
  if (!v) return false;
  std::string s;
  for (const char c : *v) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return s == "true" || s == "yes" || s == "on" || s == "1" || s.empty();
}

Error said(std::string message) { return Error{Errc::invalid_argument, std::move(message)}; }

// git's get_upstream_ref: branch.<name>.merge, with git's words when there
// is none (or several).
Result<std::string> upstream_ref(const repo::GitConfig& config, const std::string& branch, const std::string& remote) {
  const std::string b = short_branch(branch);
  const auto merge = config_list(config, "branch." + b + ".merge");
  if (merge.empty() && config_true(config.get("push.autosetupremote"))) return branch;
  if (merge.empty() || !config.get("branch." + b + ".remote")) {
    return tl::unexpected(said("The current branch " + b +
                               " has no upstream branch.\nTo push the current branch and set the remote as upstream, "
                               "use\n\n    git courier push " +
                               remote + " " + b + "\n    git branch --set-upstream-to=" + remote + "/" + b +
                               "\n\nTo have this happen automatically for branches without a tracking\nupstream, see "
                               "'push.autoSetupRemote' in 'git help config'."));
  }
  if (merge.size() != 1) {
    return tl::unexpected(said("The current branch " + b + " has multiple upstream branches, refusing to push."));
  }
  return merge.front();
}

Error simple_mismatch(const std::string& upstream, const std::string& remote, bool unspecified) {
  std::string short_up = upstream.rfind("refs/heads/", 0) == 0 ? short_branch(upstream) : upstream;
  std::string text =
      "The upstream branch of your current branch does not match\nthe name of your current branch.  To "
      "push to the upstream branch\non the remote, use\n\n    git courier push " +
      remote + " HEAD:" + short_up +
      "\n\nTo push to the branch of the same name on the remote, use\n\n    git courier push " + remote + " HEAD\n";
  if (unspecified) text += "\nTo choose either option permanently, see push.default in 'git help config'.";
  return said(text);
}

// push.default's value, checked as git checks it.
Result<std::string> push_default_mode(const repo::GitConfig& config) {
  const auto mode = config.get("push.default");
  if (!mode) return std::string("unspecified");
  for (const char* known : {"nothing", "matching", "simple", "upstream", "tracking", "current"}) {
    if (*mode == known) return *mode == "tracking" ? std::string("upstream") : *mode;
  }
  return tl::unexpected(said("malformed value for push.default: " + *mode +
                             "\nmust be one of nothing, matching, simple, upstream or current"));
}

}  // namespace

Result<std::string> default_push_remote(const repo::GitConfig& config, const repo::RefSnapshot& refs) {
  const auto branch = refs.current_branch();
  std::optional<std::string> word;
  if (branch) word = config.get("branch." + short_branch(*branch) + ".pushremote");
  if (!word || word->empty()) word = config.get("remote.pushdefault");
  if (!word || word->empty()) word = remote_for_branch(config, branch);
  const bool configured = !config_list(config, "remote." + *word + ".url").empty() ||
                          !config_list(config, "remote." + *word + ".pushurl").empty();
  if (!configured) {
    return tl::unexpected(
        said("No configured push destination.\nEither specify the URL from the command-line or configure a remote "
             "repository using\n\n    git remote add <name> <url>\n\nand then push using the remote name\n\n    git "
             "courier push <name>"));
  }
  return *word;
}

Result<std::string> default_push_refspec(const repo::GitConfig& config, const repo::RefSnapshot& refs,
                                         const std::string& remote, bool named) {
  if (named) {
    const auto configured = config_list(config, "remote." + remote + ".push");
    if (configured.size() > 1) return tl::unexpected(several_refspecs(configured));
    if (configured.size() == 1) return configured.front();
  }
  auto mode = push_default_mode(config);
  if (!mode) return tl::unexpected(mode.error());
  if (*mode == "nothing") {
    return tl::unexpected(said("You didn't specify any refspecs to push, and push.default is \"nothing\"."));
  }
  if (*mode == "matching") {
    return tl::unexpected(said(
        "push.default is \"matching\": git would push every branch that has a branch of the same name on the remote; "
        "git-courier delivers one object to one ref: name one (e.g. git courier push " +
        remote + " HEAD)"));
  }
  const auto branch = refs.current_branch();
  if (!branch) {
    return tl::unexpected(
        said("You are not currently on a branch.\nTo push the history leading to the current "
             "(detached HEAD)\nstate now, use\n\n    git courier push " +
             remote + " HEAD:<name-of-remote-branch>"));
  }
  const bool same_remote = remote == remote_for_branch(config, branch);
  std::string dst = *branch;
  if (*mode == "upstream") {
    if (!same_remote) {
      return tl::unexpected(said("You are pushing to remote '" + remote +
                                 "', which is not the upstream of\nyour current branch '" + short_branch(*branch) +
                                 "', without telling me what to push\nto update which remote branch."));
    }
    auto up = upstream_ref(config, *branch, remote);
    if (!up) return tl::unexpected(up.error());
    dst = *up;
  } else if (*mode != "current" && same_remote) {  // simple, git's default
    auto up = upstream_ref(config, *branch, remote);
    if (!up) return tl::unexpected(up.error());
    if (*up != *branch) return tl::unexpected(simple_mismatch(*up, remote, *mode == "unspecified"));
  }
  return *branch + ":" + dst;
}

}  // namespace courier::cli
