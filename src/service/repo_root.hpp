// repo_root.hpp — the service's repository root rule: a repository may be
// delivered from only when everything its objects are read from lies under
// --repo-root, symbolic links resolved.
//
// The path a caller names is not enough: a `.git` file (gitdir: /elsewhere),
// a worktree's commondir, a symbolic link inside the object directory or an
// alternate in objects/info/alternates (followed recursively by libgit2 and
// git alike) would hand the child another repository's objects.
#pragma once

#include <string>

#include "courier/result.hpp"

namespace courier::service {

// Nested alternates followed (git's own limit is 5 levels) and object
// directories looked at in all: a repository past either is refused.
inline constexpr int kMaxAlternateDepth = 5;
inline constexpr int kMaxObjectDirs = 64;

// True when `path` (canonical) is `root` (canonical) or under it.
bool is_under_root(const std::string& path, const std::string& root);

// Checks the repository at `repo` (canonical, under `root`): its git
// directory (the directory itself, its `.git` directory, or the target of
// its `.git` file), the common directory a `commondir` file names, the
// object directory with its `pack` and fan-out entries, and every alternate,
// recursively, each resolved and required under `root`. Errors:
// invalid_argument naming what lies outside, or what cannot be read (a
// symbolic link or special file where a small text file is expected, an
// alternate that does not resolve, too many or too deep alternates).
Result<void> check_repository_under_root(const std::string& repo, const std::string& root);

}  // namespace courier::service
