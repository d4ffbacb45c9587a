// update_rule.cpp — git's fast-forward rule for a pushed ref, read with
// libgit2 from the local repository (never written to, C3).
#include "repo/update_rule.hpp"

#include <algorithm>

#include "repo/repository.hpp"

namespace courier::repo {

namespace {

bool is_zero(const std::string& hex) {
  return !hex.empty() && std::all_of(hex.begin(), hex.end(), [](char c) { return c == '0'; });
}

// The commit an object names, peeling annotated tags as git's
// lookup_commit_reference does; nullopt when it names no commit.
std::optional<git_oid> peeled_commit(git_repository* repo, const git_oid& id) {
  git_object* raw = nullptr;
  if (git_object_lookup(&raw, repo, &id, GIT_OBJECT_ANY) != 0) return std::nullopt;
  Object obj(raw);
  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, obj.get(), GIT_OBJECT_COMMIT) != 0) return std::nullopt;
  Object commit(peeled);
  return *git_object_id(commit.get());
}

}  // namespace

Result<std::optional<std::string>> fast_forward_refusal(git_repository* repo, const std::string& repo_path,
                                                        const std::string& ref, const std::string& old_hex,
                                                        const std::string& new_hex) {
  // A new ref: git creates it, whatever it is.
  if (is_zero(old_hex)) return std::optional<std::string>{};
  const std::string remote_has = "the remote's " + ref + " is at " + old_hex;
  if (ref.rfind("refs/tags/", 0) == 0) {
    return std::optional<std::string>{"already exists: " + remote_has + "; an existing tag is moved only with --force"};
  }
  git_oid old_id;
  git_oid new_id;
  if (old_hex.size() != GIT_OID_HEXSZ || git_oid_fromstr(&old_id, old_hex.c_str()) != 0) {
    return fail(Errc::invalid_argument, "malformed old id '" + old_hex + "' for " + ref);
  }
  if (new_hex.size() != GIT_OID_HEXSZ || git_oid_fromstr(&new_id, new_hex.c_str()) != 0) {
    return fail(Errc::invalid_argument, "malformed object id '" + new_hex + "'");
  }
  // git_odb_exists, not a lookup: "not here" and "not a commit" are two
  // different answers.
  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo) != 0) return tl::unexpected(git_failure("reading " + repo_path));
  const bool have_old = git_odb_exists(odb, &old_id) == 1;
  git_odb_free(odb);
  if (!have_old) {
    return std::optional<std::string>{"fetch first: " + remote_has +
                                      ", which is not in the local repository (fetch it, then push again; "
                                      "--force replaces it unseen)"};
  }
  const auto old_commit = peeled_commit(repo, old_id);
  const auto new_commit = peeled_commit(repo, new_id);
  if (!old_commit) {
    return std::optional<std::string>{"needs force: " + remote_has + ", which is not a commit"};
  }
  if (!new_commit) {
    return fail(Errc::invalid_argument, "object " + new_hex + " is not a commit or an annotated tag of one");
  }
  // git's ref_newer: the old commit is the new one or one of its ancestors.
  if (git_oid_equal(&*old_commit, &*new_commit)) return std::optional<std::string>{};
  const int descends = git_graph_descendant_of(repo, &*new_commit, &*old_commit);
  if (descends < 0) return tl::unexpected(git_failure("walking the history of " + new_hex));
  if (descends == 1) return std::optional<std::string>{};
  return std::optional<std::string>{"non-fast-forward: " + remote_has + ", which is not an ancestor of " + new_hex +
                                    " (merge or rebase onto it, or use --force or --force-with-lease)"};
}

Result<std::optional<std::string>> fast_forward_refusal(const std::string& repo_path, const std::string& ref,
                                                        const std::string& old_hex, const std::string& new_hex) {
  auto repo = open_repo(repo_path);
  if (!repo) return tl::unexpected(repo.error());
  return fast_forward_refusal(repo->get(), repo_path, ref, old_hex, new_hex);
}

}  // namespace courier::repo
