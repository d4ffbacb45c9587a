// pack.cpp — pack building with libgit2 (the repository is opened, and
// libgit2 errors converted, by src/repo/repository.cpp).
//
// libgit2 honours the packbuilder progress callback only while objects are
// being added; the delta search that follows ignores it. That is why this
// runs in a child: past the deadline, the parent's SIGKILL ends it.
#include "child/pack.hpp"
#include "repo/repository.hpp"

#include <git2.h>

#include <memory>
#include <mutex>
#include <optional>

namespace courier::child {

using repo::gated_object;
using repo::git_failure;
using repo::Object;
using repo::open_repo;
using repo::Repo;

namespace {

struct WalkDeleter {
  void operator()(git_revwalk* w) const { git_revwalk_free(w); }
};
struct BuilderDeleter {
  void operator()(git_packbuilder* p) const { git_packbuilder_free(p); }
};

struct Progress {
  const PackSpec* spec = nullptr;
  bool expired = false;
};

// libgit2's two stages, by git's names: adding objects is git's
// "Enumerating objects" (a count, no total: libgit2 passes 0), the delta
// search is "Compressing objects" (done of total).
int on_pack_progress(int stage, std::uint32_t current, std::uint32_t total, void* payload) {
  auto* p = static_cast<Progress*>(payload);
  if (sys::mono_now_ns() >= p->spec->deadline) {
    p->expired = true;
    return -1;  // honoured while adding objects only
  }
  if (p->spec->progress) {
    if (stage == GIT_PACKBUILDER_ADDING_OBJECTS) {
      p->spec->progress("enumerate", current, 0);
    } else {
      p->spec->progress("compress", current, total);
    }
  }
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

using Walk = std::unique_ptr<git_revwalk, WalkDeleter>;

// The spec's repository: the one it has open, else opened now (owned).
struct SpecRepo {
  Repo owned;
  git_repository* get = nullptr;
};

// Errors: as open_repo.
Result<SpecRepo> repo_of(const PackSpec& spec) {
  SpecRepo r;
  if (spec.opened) {
    r.get = spec.opened;
    return r;
  }
  auto repo = open_repo(spec.repo);
  if (!repo) return tl::unexpected(repo.error());
  r.owned = std::move(*repo);
  r.get = r.owned.get();
  return r;
}

// The push's edge: the spec's, else found now.
Result<SendEdge> edge_of(const PackSpec& spec) {
  if (spec.edge) return *spec.edge;
  const std::vector<std::string_view> hide(spec.hide.begin(), spec.hide.end());
  if (spec.opened) return find_send_edge(spec.opened, spec.oids, hide);
  return find_send_edge(spec.repo, spec.oids, hide);
}

// The commits the remote lacks, walked from the gated objects with the
// push's edge hidden; `hidden` counts the ids hidden. The walk needs its
// repository and objects alive, so they travel with it.
struct SendWalk {
  SpecRepo repo;
  std::vector<Object> objs;
  Walk walk;
  std::size_t hidden = 0;
};

// Errors: as check_gated_object, os_error (libgit2 failures).
Result<SendWalk> walk_to_send(const PackSpec& spec) {
  auto edge = edge_of(spec);
  if (!edge) return tl::unexpected(edge.error());
  SendWalk out;
  auto repo = repo_of(spec);
  if (!repo) return tl::unexpected(repo.error());
  out.repo = std::move(*repo);
  git_revwalk* raw_walk = nullptr;
  if (git_revwalk_new(&raw_walk, out.repo.get) != 0) return tl::unexpected(git_failure("git_revwalk_new"));
  out.walk.reset(raw_walk);
  git_revwalk_sorting(out.walk.get(), GIT_SORT_TOPOLOGICAL);
  for (const auto& oid : spec.oids) {
    auto obj = gated_object(out.repo.get, oid);
    if (!obj) return tl::unexpected(obj.error());
    if (git_revwalk_push(out.walk.get(), git_object_id(obj->get())) != 0) {
      return tl::unexpected(git_failure("revwalk from " + oid));
    }
    out.objs.push_back(std::move(*obj));
  }
  for (const auto& hex : edge->hide) {
    git_oid id;
    if (git_oid_fromstr(&id, hex.c_str()) != 0) continue;
    // The edge's non-commits (a tagged tree or blob) cannot be hidden from
    // a commit walk, and need not be: none is an ancestor of our commit.
    if (git_revwalk_hide(out.walk.get(), &id) == 0) {
      ++out.hidden;
    } else {
      git_error_clear();
    }
  }
  return out;
}

}  // namespace

Result<bool> is_small_push(const PackSpec& spec, std::size_t max_commits) {
  auto edge = edge_of(spec);
  if (!edge) return tl::unexpected(edge.error());
  // A remote that has none of this history gets all of it: never small.
  return edge->hidden > 0 && edge->commits <= max_commits;
}

Result<GitPackPlan> plan_git_pack(const PackSpec& spec) {
  auto edge = edge_of(spec);
  if (!edge) return tl::unexpected(edge.error());
  auto repo = repo_of(spec);
  if (!repo) return tl::unexpected(repo.error());
  GitPackPlan plan;
  plan.git_dir = git_repository_path(repo->get);
  for (const auto& oid : spec.oids) {
    auto obj = gated_object(repo->get, oid);
    if (!obj) return tl::unexpected(obj.error());
    plan.revs += oid + "\n";
  }
  for (const auto& hex : edge->hide) plan.revs += "^" + hex + "\n";
  return plan;
}

Result<PackResult> build_pack(const PackSpec& spec) {
  auto walk = walk_to_send(spec);
  if (!walk) return tl::unexpected(walk.error());
  git_repository* repo = walk->repo.get;

  git_packbuilder* raw_pb = nullptr;
  if (git_packbuilder_new(&raw_pb, repo) != 0) return tl::unexpected(git_failure("git_packbuilder_new"));
  std::unique_ptr<git_packbuilder, BuilderDeleter> pb(raw_pb);
  git_packbuilder_set_threads(pb.get(), 0);  // as many as there are cores
  Progress progress;
  progress.spec = &spec;
  git_packbuilder_set_callbacks(pb.get(), on_pack_progress, &progress);
  if (git_packbuilder_insert_walk(pb.get(), walk->walk.get()) != 0) {
    if (progress.expired) return fail(Errc::leg_timeout, "the deadline passed while gathering objects");
    return tl::unexpected(git_failure("gathering objects"));
  }
  // A walk yields commits: an annotated tag among the gated objects is
  // added itself (its commit came with the walk, or the remote has it).
  for (const Object& obj : walk->objs) {
    if (git_object_type(obj.get()) != GIT_OBJECT_TAG) continue;
    if (git_packbuilder_insert(pb.get(), git_object_id(obj.get()), nullptr) != 0) {
      return tl::unexpected(git_failure("adding the tag object"));
    }
  }
  // libgit2 reports adding objects at most every half second, so a quick
  // walk may never have said its count: the phase ends on the true one.
  if (spec.progress) spec.progress("enumerate", git_packbuilder_object_count(pb.get()), 0);
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
  out.hidden = walk->hidden;
  return out;
}

}  // namespace courier::child
