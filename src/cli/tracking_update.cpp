// tracking_update.cpp — the remote-tracking ref moved after a push that
// landed (see the header).
#include "cli/tracking_update.hpp"

#include <cstdio>

#include "cli/http_settings.hpp"
#include "cli/remote_name.hpp"
#include "repo/git_config.hpp"
#include "repo/remote_tracking.hpp"
#include "wire/text.hpp"

namespace courier::cli {

namespace {

// git's committer for the reflog: GIT_COMMITTER_NAME/EMAIL, else user.name
// and user.email of the configuration git reads in the repository.
std::pair<std::string, std::string> committer(const repo::GitConfig& config) {
  const EnvLookup env = process_env();
  const std::string name = env("GIT_COMMITTER_NAME").value_or(config.get("user.name").value_or(""));
  const std::string email = env("GIT_COMMITTER_EMAIL").value_or(config.get("user.email").value_or(""));
  return {name, email};
}

void warn(const std::string& message) {
  std::fprintf(stderr, "git-courier: warning: %s\n", wire::terminal_safe(message).c_str());
}

void move_tracking(const PushArgs& a, const PushedRef& pushed);

}  // namespace

bool outcome_moves_tracking(const Outcome& o) {
  if (o.replayed) return false;
  if (o.kind == OutcomeKind::up_to_date) return o.remote_effect != RemoteEffect::possible;
  return o.kind == OutcomeKind::delivered && o.remote_effect == RemoteEffect::applied;
}

void update_tracking(const PushArgs& a, const PushedRef& pushed, const Outcome& o) {
  if (!pushed.remote_name || pushed.oid.empty() || !outcome_moves_tracking(o)) return;
  move_tracking(a, pushed);
}

void update_tracking_refs(const PushArgs& a, const std::string& repo, const std::optional<std::string>& remote_name,
                          const Outcome& o) {
  if (!remote_name || o.replayed) return;
  for (const auto& r : o.refs) {
    if (r.status != RefStatus::ok && r.status != RefStatus::up_to_date) continue;
    move_tracking(a, PushedRef{repo, remote_name, r.ref, r.oid});
  }
}

namespace {

void move_tracking(const PushArgs& a, const PushedRef& pushed) {
  auto config = repo::GitConfig::open(pushed.repo);
  if (!config) return warn("remote-tracking ref not updated: " + config.error().message);
  const auto fetch = config_list(*config, "remote." + *pushed.remote_name + ".fetch");
  auto tracking = repo::remote_tracking(pushed.repo, fetch, pushed.ref);
  if (!tracking) return warn("remote-tracking ref not updated: " + tracking.error().message);
  if (!*tracking) return;  // no fetch refspec maps the ref: git has nothing to update either
  const auto [name, email] = committer(*config);
  auto done = repo::update_tracking_ref(pushed.repo, (*tracking)->name, pushed.oid, name, email);
  if (!done) return warn("could not update " + (*tracking)->name + ": " + done.error().message);
  if (a.verbose && !a.quiet) {
    std::fprintf(stderr, "git-courier: %s is now %s (%s)\n", wire::terminal_safe((*tracking)->name).c_str(),
                 pushed.oid.substr(0, 12).c_str(), repo::kTrackingReflogMessage);
  }
}

}  // namespace

}  // namespace courier::cli
