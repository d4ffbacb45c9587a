// repository.cpp — the local repository, read with libgit2: open it (this
// directory only), find and check the gated object, resolve a revision. The
// one place libgit2 errors are converted to Error.
#include "repo/repository.hpp"

#include <mutex>

namespace courier::repo {

Error git_failure(const std::string& what) {
  const git_error* e = git_error_last();
  return Error{Errc::os_error, what + ": " + (e && e->message ? e->message : "libgit2 error")};
}

Result<Repo> open_repo(const std::string& path) {
  init_libgit2();
  git_repository* raw = nullptr;
  // NO_SEARCH: exactly this directory, never a parent's repository.
  if (git_repository_open_ext(&raw, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) {
    return fail(Errc::invalid_argument, "cannot open repository " + path + ": " +
                                            (git_error_last() ? git_error_last()->message : "not a repository"));
  }
  return Repo(raw);
}

Result<Object> gated_object(git_repository* repo, const std::string& hex) {
  git_oid oid;
  if (hex.size() != GIT_OID_HEXSZ || git_oid_fromstr(&oid, hex.c_str()) != 0) {
    return fail(Errc::invalid_argument, "malformed object id '" + hex + "'");
  }
  git_object* raw = nullptr;
  if (git_object_lookup(&raw, repo, &oid, GIT_OBJECT_ANY) != 0) {
    return fail(Errc::invalid_argument, "object " + hex + " is not in the repository");
  }
  Object obj(raw);
  const git_object_t type = git_object_type(obj.get());
  if (type == GIT_OBJECT_COMMIT) return obj;
  if (type == GIT_OBJECT_TAG) {
    git_object* peeled = nullptr;
    if (git_object_peel(&peeled, obj.get(), GIT_OBJECT_ANY) == 0) {
      Object target(peeled);
      if (git_object_type(target.get()) == GIT_OBJECT_COMMIT) return obj;
    }
    return fail(Errc::invalid_argument, "tag " + hex + " does not point to a commit");
  }
  return fail(Errc::invalid_argument,
              "object " + hex + " is a " + git_object_type2string(type) + ", not a commit or an annotated tag of one");
}

void init_libgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    for (int level :
         {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_PROGRAMDATA}) {
      git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, "");
    }
  });
}

Result<void> check_gated_object(const std::string& repo_path, const std::string& oid) {
  auto repo = open_repo(repo_path);
  if (!repo) return tl::unexpected(repo.error());
  auto obj = gated_object(repo->get(), oid);
  if (!obj) return tl::unexpected(obj.error());
  return {};
}

Result<std::string> resolve_revision(const std::string& repo_path, const std::string& rev) {
  auto repo = open_repo(repo_path);
  if (!repo) return tl::unexpected(repo.error());
  git_object* raw = nullptr;
  if (git_revparse_single(&raw, repo->get(), rev.c_str()) != 0) {
    return fail(Errc::invalid_argument, "unknown revision '" + rev + "' in " + repo_path);
  }
  Object obj(raw);
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, git_object_id(obj.get()));
  return std::string(hex);
}

// ':' also covers '<rev>:<path>' and ':<n>:<path>', which name trees and
// blobs that could never be delivered anyway; no ref name contains ':'. A
// reflog selector ('main@{2024-05-01 12:00}') may, and reads only the
// reflog: it is left alone.
Result<void> check_bounded_revision(const std::string& flag, const std::string& rev) {
  std::string outside_reflog;
  for (std::size_t i = 0; i < rev.size(); ++i) {
    if (rev.compare(i, 2, "@{") == 0) {
      const std::size_t close = rev.find('}', i);
      if (close != std::string::npos) {
        i = close;
        continue;
      }
    }
    outside_reflog.push_back(rev[i]);
  }
  if (outside_reflog.find(':') != std::string::npos || outside_reflog.find("^{/") != std::string::npos) {
    return fail(Errc::invalid_argument,
                flag + " '" + rev +
                    "': revision syntaxes that search the history (':/text', '^{/text}') or name "
                    "a path are refused, because their cost has no bound; give a commit id, a branch or a tag");
  }
  return {};
}

}  // namespace courier::repo
