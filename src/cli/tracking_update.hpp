// tracking_update.hpp — after a push to a named remote, its remote-tracking
// ref (refs/remotes/<name>/<branch>, through remote.<name>.fetch) moved as
// git push moves it, so that a bare --force-with-lease expects what this
// push left (X-TRACK1, docs/operations.md "Remote-tracking refs"). Only
// when the outcome saw the remote at the pushed id: `delivered` with
// remote_effect `applied`, or `up_to_date`; never after `possible`, a
// refusal or a failure, and never from a replayed outcome (nothing was
// observed now). The CLI alone writes it, in the user's repository: the
// child (C3), the service and the library never do.
#pragma once

#include <optional>
#include <string>

#include "cli/args.hpp"
#include "courier/outcome.hpp"

namespace courier::cli {

// What the push was: the repository, the remote's configured name (none:
// a URL, which has no tracking refs), the pushed ref and object.
struct PushedRef {
  std::string repo;
  std::optional<std::string> remote_name;
  std::string ref;
  std::string oid;
};

// True when the outcome observed the remote's ref at the pushed id. Pure.
bool outcome_moves_tracking(const Outcome& o);

// Moves the tracking ref when the outcome allows it. A failure to write it
// is a warning on stderr (as git's), never a change of the exit code: the
// push itself stands. With -v the move is said.
void update_tracking(const PushArgs& a, const PushedRef& pushed, const Outcome& o);

// A delivery of several refs: each ref's tracking ref moved as git moves it,
// per ref — one the remote took (ok) or already had (up_to_date) moves to
// its id, a deleted one is deleted; a ref refused, not attempted or of
// unknown fate is left as it was. Never from a replayed outcome.
void update_tracking_refs(const PushArgs& a, const std::string& repo, const std::optional<std::string>& remote_name,
                          const Outcome& o);

}  // namespace courier::cli
