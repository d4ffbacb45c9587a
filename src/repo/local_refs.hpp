// local_refs.hpp — the local refs a push refspec is resolved against, read
// once with libgit2 (as git's push reads them with for_each_ref): every
// name under refs/, which of them are symbolic and to what, and where HEAD
// points. Read-only.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "courier/result.hpp"

namespace courier::repo {

struct RefSnapshot {
  std::set<std::string> refs;                   // every ref under refs/ (direct or symbolic)
  std::map<std::string, std::string> symbolic;  // symbolic ref -> its target's name ("HEAD" included)
  bool head_detached = false;                   // HEAD holds an id, not a branch
  bool head_exists = true;                      // false: no HEAD at all

  // The current branch's full name (HEAD's target under refs/heads/, born
  // or not); nullopt when HEAD is detached or points elsewhere.
  std::optional<std::string> current_branch() const;
};

// Errors: invalid_argument (not a repository), os_error (refs unreadable).
Result<RefSnapshot> read_refs(const std::string& repo);

// Whether `rev` names an object of the repository (git's get_oid: an id,
// a ref, HEAD, main~1, ...), after check_bounded_revision.
bool names_object(const std::string& repo, const std::string& rev);

}  // namespace courier::repo
