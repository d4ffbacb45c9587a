// pack_engine.hpp — PackEngine::automatic settled in the parent: the git
// found on PATH (or the host's git_program), or libgit2 when there is none.
// Nothing is started here: whether that git is fit (its version) is the
// child's question, asked only when it would pack with git
// (child/git_version.hpp), so a delivery that git does not pack never
// starts a git at all.
#pragma once

#include "courier/courier.hpp"
#include "courier/result.hpp"

namespace courier::seat {

// Settles req's engine before dispatch: automatic becomes git (with
// git_program the absolute path of `git` on PATH, or the host's, and the
// delivery still automatic: the child may pack with libgit2 instead) or
// libgit2 (no git on PATH; git_program cleared); git gets git_program from
// PATH when it is empty. Errors (the delivery ends `failed`, nothing
// dispatched): invalid_argument, for git: no git on PATH; for git and
// automatic: a relative git_program.
Result<void> resolve_pack_engine(DeliveryRequest& req);

}  // namespace courier::seat
