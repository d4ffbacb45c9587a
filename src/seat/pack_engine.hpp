// pack_engine.hpp — PackEngine::automatic resolved in the parent: the git
// found on PATH (or the host's git_program), checked once per process for a
// version the git engine supports; libgit2 when there is none.
#pragma once

#include <optional>
#include <string>

#include "courier/courier.hpp"
#include "courier/result.hpp"

namespace courier::seat {

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

// The git the automatic engine uses: `program` when it is not empty (it
// must be absolute), else `git` on this process's PATH, if its
// `--version` is at least kMinGitVersion. The answer for each program is
// found once per process and cached (thread-safe), so a service does not
// start git again for each delivery. Errors (the reason automatic falls
// back to libgit2): invalid_argument (no git on PATH, or a relative
// program), spawn_failed (it would not start), os_error (its answer could
// not be read in time), invalid_value (not a git version, or too old).
Result<std::string> usable_git(const std::string& program = "");

// Settles req's engine before dispatch: automatic becomes git (with
// git_program the usable git's absolute path) or libgit2 (git_program
// cleared); git gets git_program from PATH when it is empty. Errors
// (the delivery ends `failed`, nothing dispatched): invalid_argument, for
// git: no git on PATH; for git and automatic: a relative git_program.
Result<void> resolve_pack_engine(DeliveryRequest& req);

}  // namespace courier::seat
