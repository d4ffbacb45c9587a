// pack.cpp — pack building with libgit2; the one place libgit2 errors are
// converted to Error.
//
// libgit2 honours the packbuilder progress callback only while objects are
// being added; the delta search that follows ignores it. That is why this
// runs in a child: past the deadline, the parent's SIGKILL ends it.
#include "child/pack.hpp"

#include <git2.h>

#include <memory>
#include <mutex>
#include <optional>

namespace courier::child {

namespace {

Error git_failure(const std::string& what) {
  const git_error* e = git_error_last();
  return Error{Errc::os_error, what + ": " + (e && e->message ? e->message : "libgit2 error")};
}

struct RepoDeleter {
  void operator()(git_repository* r) const { git_repository_free(r); }
};
struct ObjectDeleter {
  void operator()(git_object* o) const { git_object_free(o); }
};
struct WalkDeleter {
  void operator()(git_revwalk* w) const { git_revwalk_free(w); }
};
struct BuilderDeleter {
  void operator()(git_packbuilder* p) const { git_packbuilder_free(p); }
};
using Repo = std::unique_ptr<git_repository, RepoDeleter>;
using Object = std::unique_ptr<git_object, ObjectDeleter>;

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

// The gated object, with its type checked (commit, or annotated tag of one).
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
  return fail(Errc::invalid_argument, "object " + hex + " is a " + git_object_type2string(type) +
                                          ", not a commit or an annotated tag of one");
}

struct Progress {
  const PackSpec* spec = nullptr;
  bool expired = false;
};

int on_pack_progress(int /*stage*/, std::uint32_t current, std::uint32_t total, void* payload) {
  auto* p = static_cast<Progress*>(payload);
  if (sys::mono_now_ns() >= p->spec->deadline) {
    p->expired = true;
    return -1;  // honoured while adding objects only
  }
  if (p->spec->progress) p->spec->progress(current, total);
  return 0;
}

struct SinkState {
  const PackSpec* spec = nullptr;
  std::uint64_t bytes = 0;
  std::optional<Error> error;
};

int on_pack_data(void* buf, std::size_t size, void* payload) {
  auto* s = static_cast<SinkState*>(payload);
  if (auto r = s->spec->sink(buf, size); !r) {
    s->error = r.error();
    return -1;
  }
  s->bytes += size;
  return 0;
}

}  // namespace

void init_libgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    for (int level : {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_PROGRAMDATA}) {
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

Result<GitPackPlan> plan_git_pack(const PackSpec& spec) {
  auto repo = open_repo(spec.repo);
  if (!repo) return tl::unexpected(repo.error());
  auto obj = gated_object(repo->get(), spec.oid);
  if (!obj) return tl::unexpected(obj.error());
  GitPackPlan plan;
  plan.git_dir = git_repository_path(repo->get());
  plan.revs = spec.oid + "\n";
  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo->get()) != 0) return tl::unexpected(git_failure("git_repository_odb"));
  for (const auto& hex : spec.hide) {
    git_oid id;
    if (git_oid_fromstr(&id, hex.c_str()) != 0 || !git_odb_exists(odb, &id)) continue;
    plan.revs += "^" + hex + "\n";
  }
  git_odb_free(odb);
  return plan;
}

Result<PackResult> build_pack(const PackSpec& spec) {
  auto repo = open_repo(spec.repo);
  if (!repo) return tl::unexpected(repo.error());
  auto obj = gated_object(repo->get(), spec.oid);
  if (!obj) return tl::unexpected(obj.error());

  git_revwalk* raw_walk = nullptr;
  if (git_revwalk_new(&raw_walk, repo->get()) != 0) return tl::unexpected(git_failure("git_revwalk_new"));
  std::unique_ptr<git_revwalk, WalkDeleter> walk(raw_walk);
  git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL);
  if (git_revwalk_push(walk.get(), git_object_id(obj->get())) != 0) {
    return tl::unexpected(git_failure("revwalk from " + spec.oid));
  }
  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo->get()) != 0) return tl::unexpected(git_failure("git_repository_odb"));
  for (const auto& hex : spec.hide) {
    git_oid id;
    if (git_oid_fromstr(&id, hex.c_str()) != 0 || !git_odb_exists(odb, &id)) continue;
    // Hiding a non-commit (a tag of a tree, a blob) is not possible and not
    // needed: it cannot be an ancestor of our commit.
    if (git_revwalk_hide(walk.get(), &id) != 0) git_error_clear();
  }
  git_odb_free(odb);

  git_packbuilder* raw_pb = nullptr;
  if (git_packbuilder_new(&raw_pb, repo->get()) != 0) return tl::unexpected(git_failure("git_packbuilder_new"));
  std::unique_ptr<git_packbuilder, BuilderDeleter> pb(raw_pb);
  git_packbuilder_set_threads(pb.get(), 0);  // as many as there are cores
  Progress progress;
  progress.spec = &spec;
  git_packbuilder_set_callbacks(pb.get(), on_pack_progress, &progress);
  if (git_packbuilder_insert_walk(pb.get(), walk.get()) != 0) {
    if (progress.expired) return fail(Errc::leg_timeout, "the deadline passed while gathering objects");
    return tl::unexpected(git_failure("gathering objects"));
  }
  if (git_object_type(obj->get()) == GIT_OBJECT_TAG) {
    if (git_packbuilder_insert(pb.get(), git_object_id(obj->get()), nullptr) != 0) {
      return tl::unexpected(git_failure("adding the tag object"));
    }
  }
  SinkState sink;
  sink.spec = &spec;
  if (git_packbuilder_foreach(pb.get(), on_pack_data, &sink) != 0) {
    if (sink.error) return tl::unexpected(*sink.error);
    if (progress.expired) return fail(Errc::leg_timeout, "the deadline passed while writing the pack");
    return tl::unexpected(git_failure("writing the pack"));
  }
  PackResult out;
  out.objects = git_packbuilder_object_count(pb.get());
  out.bytes = sink.bytes;
  return out;
}

}  // namespace courier::child
