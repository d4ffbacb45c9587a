// git_version.hpp — whether a git is fit for the git pack engine: its
// `--version` at least kMinGitVersion. Asked by the child, only when the
// automatic engine would pack with git (not for a small push), once per
// process.
#pragma once

#include <optional>
#include <string>

#include "courier/result.hpp"

namespace courier::child {

// The oldest git whose pack-objects the git engine runs: 2.32.0, the first
// that honours GIT_CONFIG_GLOBAL (the engine sets it to /dev/null so that no
// user configuration shapes the pack). The pack-objects options it uses
// (--revs, --stdout, --thin, --delta-base-offset, --progress) are all older.
struct GitVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  auto operator<=>(const GitVersion&) const = default;
};
inline constexpr GitVersion kMinGitVersion{2, 32, 0};

// "git version 2.39.5" (and vendor tails such as ".windows.1" or
// " (Apple Git-145)") as a version; nullopt for anything else.
std::optional<GitVersion> parse_git_version(const std::string& text);

// `program` (absolute) when its `--version` is at least kMinGitVersion.
// The answer for each program is found once per process and cached
// (thread-safe). Errors (the reason the automatic engine packs with
// libgit2 instead): invalid_argument (a relative program), spawn_failed
// (it would not start), os_error (its answer could not be read in time),
// invalid_value (not a git version, or too old).
Result<std::string> usable_git(const std::string& program);

}  // namespace courier::child
