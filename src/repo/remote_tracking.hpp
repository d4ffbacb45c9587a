// remote_tracking.hpp — the remote-tracking ref git reads for a pushed ref,
// as `git push --force-with-lease` does (remote.c, remote_tracking): the
// remote's fetch refspecs (`remote.<name>.fetch`) map the remote's ref to a
// local one, whose id is the lease's expected value. Read only (C3).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "courier/result.hpp"

namespace courier::repo {

struct TrackingRef {
  std::string name;                // e.g. refs/remotes/origin/main
  std::optional<std::string> oid;  // its id; nullopt: no such ref in the repository
};

// The first fetch refspec whose source matches `remote_ref` (a negative one,
// "^refs/...", that matches it excludes it), and what that local ref holds.
// nullopt: no refspec maps it. Errors: invalid_argument (a refspec git
// would refuse too, or a repository that cannot be opened), os_error (the
// ref could not be read).
Result<std::optional<TrackingRef>> remote_tracking(const std::string& repo, const std::vector<std::string>& fetch,
                                                   const std::string& remote_ref);

}  // namespace courier::repo
