// discover.hpp — which repository a command means, found as git finds it:
// from a starting directory upwards (a subdirectory of a work tree, a bare
// repository, a linked work tree), or, with no starting directory given, as
// git does from its environment (GIT_DIR, GIT_WORK_TREE,
// GIT_CEILING_DIRECTORIES, then the working directory upwards). The CLI
// uses it for `push` (`--repo DIR` is read as `git -C DIR`); the child
// still opens exactly the path found here (open_repo), never searches.
#pragma once

#include <optional>
#include <string>

#include "courier/result.hpp"

namespace courier::repo {

// The path to give open_repo(): the work tree's top directory when it
// holds the repository's .git, else the git directory itself (a bare
// repository, or GIT_DIR elsewhere). Errors: invalid_argument with git's
// words ("not a git repository (or any of the parent directories): .git").
Result<std::string> discover_repository(const std::optional<std::string>& start);

}  // namespace courier::repo
