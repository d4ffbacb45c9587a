// update_rule.hpp — git's rule for moving a remote ref without force, as
// `git push` applies it before it sends anything (remote.c,
// set_ref_status_for_push): a new ref is always created; an existing tag
// is never moved ("already exists"); an old id the local repository does
// not have cannot be judged ("fetch first"); a side that is not a commit
// (after peeling tags) needs force ("needs force"); otherwise the new commit
// must descend from the old one ("non-fast-forward"). Read only (C3).
#pragma once

#include <optional>
#include <string>

#include "courier/result.hpp"

struct git_repository;

namespace courier::repo {

// Why git would refuse to move the remote's `ref` from `old_hex` (as the
// remote advertised it; all zeros: the ref does not exist) to `new_hex` (the
// gated object) without force: a reason that starts with git's word, or
// nullopt when git would make the move. The ancestry walk is bounded only by
// the history's size; the child runs it, inside its kill domain and
// deadline. Errors: invalid_argument (the repository cannot be opened, or
// new_hex is not in it), os_error (libgit2 could not read the history).
Result<std::optional<std::string>> fast_forward_refusal(const std::string& repo, const std::string& ref,
                                                        const std::string& old_hex, const std::string& new_hex);
// The same in a repository already open (the child opens it once per
// delivery); `repo_path` only names it in messages.
Result<std::optional<std::string>> fast_forward_refusal(git_repository* repo, const std::string& repo_path,
                                                        const std::string& ref, const std::string& old_hex,
                                                        const std::string& new_hex);

}  // namespace courier::repo
