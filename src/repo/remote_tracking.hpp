// remote_tracking.hpp — the remote-tracking ref git reads for a pushed ref,
// as `git push --force-with-lease` does (remote.c, remote_tracking): the
// remote's fetch refspecs (`remote.<name>.fetch`) map the remote's ref to a
// local one, whose id is the lease's expected value. Read here; written only
// by the CLI after a push it saw land (update_tracking_ref), never by the
// child (C3), the service or the library.
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

// The reflog message git push writes when it moves a remote-tracking ref.
inline constexpr const char* kTrackingReflogMessage = "update by push";

// Sets `tracking` (a ref remote_tracking() named) to `oid`, or deletes it
// when `oid` is 40 zeros (a pushed deletion), as git push does after the
// remote said ok or was already there: no old-id check, the reflog entry
// "update by push" (when git would log it, core.logAllRefUpdates) under the
// committer ident_name <ident_email> (either empty: libgit2's default). The repository is
// opened with libgit2's ownership check. Errors: invalid_argument (the
// repository cannot be opened, a malformed id), os_error (the ref could not
// be written: a lock held, a read-only repository).
Result<void> update_tracking_ref(const std::string& repo, const std::string& tracking, const std::string& oid,
                                 const std::string& ident_name, const std::string& ident_email);

}  // namespace courier::repo
