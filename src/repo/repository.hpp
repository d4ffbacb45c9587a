// repository.hpp — the local repository, read with libgit2, for the CLI
// (resolving --rev, checking --oid before anything runs) and the child
// (opening it to pack). Read-only in spirit (C3): nothing is ever written
// into it. libgit2 ignores global and system git configuration here, so
// nothing outside the repository changes what is read.
#pragma once

#include <git2.h>

#include <memory>
#include <string>

#include "courier/result.hpp"

namespace courier::repo {

struct RepoDeleter {
  void operator()(git_repository* r) const { git_repository_free(r); }
};
struct ObjectDeleter {
  void operator()(git_object* o) const { git_object_free(o); }
};
using Repo = std::unique_ptr<git_repository, RepoDeleter>;
using Object = std::unique_ptr<git_object, ObjectDeleter>;

// libgit2 is initialised once and told to ignore global and system git
// configuration.
void init_libgit2();

// libgit2's last error as Error{os_error, "what: <message>"}: the converter.
Error git_failure(const std::string& what);

// Exactly this directory, never a parent's repository. Errors:
// invalid_argument (not a repository).
Result<Repo> open_repo(const std::string& path);

// The gated object, with its type checked (a commit, or an annotated tag of
// one). Errors: invalid_argument (malformed id, unknown object, wrong type).
Result<Object> gated_object(git_repository* repo, const std::string& hex);

// Errors: invalid_argument (no such repository, malformed id, unknown object,
// not a commit or an annotated tag of one).
Result<void> check_gated_object(const std::string& repo, const std::string& oid);

// Resolves a revision (anything git rev-parse takes) to a full id, reading
// only. Errors: invalid_argument (no such repository, unknown revision).
Result<std::string> resolve_revision(const std::string& repo, const std::string& rev);

// A revision to be looked up in this process, before any child exists: a
// syntax whose cost grows with the history (a commit-message search walks
// it all, and nothing could kill it at the deadline) is refused; so is one
// that names a path. `flag` names where it came from in the message
// ("--rev", "rev"). Errors: invalid_argument.
Result<void> check_bounded_revision(const std::string& flag, const std::string& rev);

}  // namespace courier::repo
