// state_paths.hpp — where this program keeps its state when no flag names a
// place: the lane directory and the journal of the effective user.
//
// Every entry point (push, serve, recover, the library) must land on the
// same lanes, or one user's processes could have two live deliveries on one
// remote (rule S1). So the defaults are derived from the effective uid
// alone, never from XDG_* or HOME, which differ between a login shell, cron
// and a service manager:
//
//   root        lanes   /run/git-courier/lanes
//               journal /var/lib/git-courier/journal.db
//   other uids  lanes   <home>/.local/state/git-courier/lanes
//               journal <home>/.local/state/git-courier/journal.sqlite
//
// where <home> is the uid's home directory in the password database: a
// place that outlives login sessions (unlike /run/user/UID).
//
// The test suites run as root on real hosts; they set GIT_COURIER_TEST_ROOT
// to a private directory, and every default path above (and root's default
// socket under /run/git-courier) is taken under it. The variable is honoured
// only when it names an absolute path of a real directory (no symbolic link
// anywhere in it) owned by the effective uid with no group or other write:
// a place the user could have named with --lane-dir and --journal anyway.
// Anything else set there is refused, never silently replaced by the real
// paths (docs/testing.md, docs/operations.md).
#pragma once

#include <string>

#include "courier/result.hpp"

namespace courier::sys {

inline constexpr const char* kTestRootVariable = "GIT_COURIER_TEST_ROOT";

// The test root: "" when GIT_COURIER_TEST_ROOT is unset or empty, else its
// value once verified as above. Errors: invalid_argument (set, but not a
// directory that may be used: the message says why).
Result<std::string> test_root();

// `absolute` (a path beginning with '/') under the test root, or as it is
// when there is none. Errors: those of test_root().
Result<std::string> under_test_root(const std::string& absolute);

// The default lane directory of the effective user (see the table above).
// Errors: invalid_argument (a refused test root; a uid with no absolute home
// directory in the password database).
Result<std::string> default_lane_dir();

// The default journal file of the effective user (see the table above).
// Errors: as default_lane_dir().
Result<std::string> default_journal_path();

}  // namespace courier::sys
