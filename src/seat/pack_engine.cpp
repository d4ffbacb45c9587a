// pack_engine.cpp — the engine settled in the parent before dispatch: git
// found on PATH (by name: nothing is started here), or libgit2.
#include "seat/pack_engine.hpp"

#include "sys/process.hpp"

namespace courier::seat {

Result<void> resolve_pack_engine(DeliveryRequest& req) {
  const char* name = req.pack_engine == PackEngine::git ? "git" : "auto";
  if (req.pack_engine == PackEngine::libgit2) return {};
  if (!req.git_program.empty() && req.git_program.front() != '/') {
    return fail(Errc::invalid_argument, std::string("pack engine ") + name +
                                            ": git_program must be an absolute path, not '" + req.git_program + "'");
  }
  const bool pinned = req.pack_engine == PackEngine::git;
  req.pack_engine = PackEngine::git;
  // Pinned: the host's choice is honoured as given, without a version
  // check (an unfit git fails the delivery with git's own words).
  // Automatic: the child checks the version, and only when it would pack
  // with git (child/git_version.hpp); libgit2 packs a small push, and when
  // the git is unfit.
  if (!req.git_program.empty()) return {};
  auto found = sys::find_on_path("git");
  if (found) {
    req.git_program = *found;
    return {};
  }
  if (pinned) return fail(Errc::invalid_argument, "pack engine git: " + found.error().message);
  req.pack_engine = PackEngine::libgit2;
  return {};
}

}  // namespace courier::seat
