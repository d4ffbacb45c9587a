// send_edge.cpp — the edge of a push, read with libgit2 (see send_edge.hpp).
//
// A remote with many refs advertises each commit many times and names many
// commits this repository never fetched. Every id is parsed once into a set;
// only distinct ids reach the object database, without its refresh on a miss
// (libgit2 rescans the pack directory for every absent id otherwise: 65 µs
// each, half a minute for 450,000 of them). Then one walk finds the commits
// the remote lacks, and only their hidden parents go on to the pack engine:
// libgit2's packbuilder reads the whole tree of every commit it is told to
// hide, and git reads a revision line for each.
#include "child/send_edge.hpp"

#include <git2.h>

#include <cstring>
#include <memory>
#include <unordered_set>

#include "repo/repository.hpp"

namespace courier::child {

using repo::gated_object;
using repo::git_failure;
using repo::open_repo;

namespace {

struct OidHash {
  std::size_t operator()(const git_oid& id) const {
    std::size_t h = 0;
    std::memcpy(&h, id.id, sizeof h);  // an object id is already uniform
    return h;
  }
};
struct OidEqual {
  bool operator()(const git_oid& a, const git_oid& b) const { return git_oid_equal(&a, &b) != 0; }
};
using OidSet = std::unordered_set<git_oid, OidHash, OidEqual>;

struct WalkDeleter {
  void operator()(git_revwalk* w) const { git_revwalk_free(w); }
};
struct OdbDeleter {
  void operator()(git_odb* o) const { git_odb_free(o); }
};
struct CommitDeleter {
  void operator()(git_commit* c) const { git_commit_free(c); }
};

std::string hex_of(const git_oid& id) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &id);
  return buf;
}

// The distinct advertised ids this repository has, in the order first seen.
// Errors: os_error (libgit2 failures).
Result<std::vector<git_oid>> present_ids(git_repository* repo, const std::vector<std::string_view>& advertised) {
  git_odb* raw = nullptr;
  if (git_repository_odb(&raw, repo) != 0) return tl::unexpected(git_failure("git_repository_odb"));
  std::unique_ptr<git_odb, OdbDeleter> odb(raw);
  // One refresh for the whole pass: a pack written since the repository was
  // opened is seen, and no absent id pays for a rescan of its own.
  if (git_odb_refresh(odb.get()) != 0) return tl::unexpected(git_failure("git_odb_refresh"));
  // Not sized for the advertisement: a remote's many refs name few commits
  // more often than not, and a small set stays in the cache.
  OidSet seen;
  std::vector<git_oid> out;
  for (const auto& hex : advertised) {
    git_oid id;
    if (hex.size() != GIT_OID_HEXSZ || git_oid_fromstrn(&id, hex.data(), hex.size()) != 0) continue;
    if (!seen.insert(id).second) continue;
    if (git_odb_exists_ext(odb.get(), &id, GIT_ODB_LOOKUP_NO_REFRESH)) out.push_back(id);
  }
  git_error_clear();
  return out;
}

// Each gated object, checked (C3). Errors: as gated_object.
Result<std::vector<repo::Object>> gated_objects(git_repository* repo, const std::vector<std::string>& oids) {
  std::vector<repo::Object> objs;
  for (const auto& oid : oids) {
    auto obj = gated_object(repo, oid);
    if (!obj) return tl::unexpected(obj.error());
    objs.push_back(std::move(*obj));
  }
  return objs;
}

}  // namespace

Result<SendEdge> find_send_edge(const std::string& repo_path, const std::vector<std::string>& oids,
                                const std::vector<std::string_view>& advertised) {
  auto repo = open_repo(repo_path);
  if (!repo) return tl::unexpected(repo.error());
  return find_send_edge(repo->get(), oids, advertised);
}

Result<SendEdge> find_send_edge(git_repository* repo, const std::vector<std::string>& oids,
                                const std::vector<std::string_view>& advertised) {
  auto objs = gated_objects(repo, oids);
  if (!objs) return tl::unexpected(objs.error());
  auto present = present_ids(repo, advertised);
  if (!present) return tl::unexpected(present.error());

  SendEdge out;
  out.present = present->size();
  git_revwalk* raw_walk = nullptr;
  if (git_revwalk_new(&raw_walk, repo) != 0) return tl::unexpected(git_failure("git_revwalk_new"));
  std::unique_ptr<git_revwalk, WalkDeleter> walk(raw_walk);
  git_revwalk_sorting(walk.get(), GIT_SORT_NONE);
  for (std::size_t i = 0; i < objs->size(); ++i) {
    if (git_revwalk_push(walk.get(), git_object_id((*objs)[i].get())) != 0) {
      return tl::unexpected(git_failure("revwalk from " + oids[i]));
    }
  }
  std::vector<std::string> others;
  std::vector<const git_oid*> hidden;
  for (const auto& id : *present) {
    // Hiding a non-commit (a tree, a blob, a tag of one) is not possible:
    // it cannot be an ancestor of our commit, but git can still leave it out.
    if (git_revwalk_hide(walk.get(), &id) == 0) {
      hidden.push_back(&id);
    } else {
      git_error_clear();
      others.push_back(hex_of(id));
    }
  }
  out.hidden = hidden.size();
  if (hidden.empty()) {
    // The remote has none of this history: everything is sent, there is no
    // edge, and walking it all here would only repeat the pack engine's walk.
    out.hide = std::move(others);
    return out;
  }

  OidSet sent;
  std::vector<git_oid> order;
  git_oid id;
  while (git_revwalk_next(&id, walk.get()) == 0) {
    if (order.size() == kEdgeWalkCommits) {
      out.commits = kEdgeWalkCommits + 1;
      for (const git_oid* h : hidden) out.hide.push_back(hex_of(*h));
      out.hide.insert(out.hide.end(), others.begin(), others.end());
      return out;
    }
    sent.insert(id);
    order.push_back(id);
  }
  git_error_clear();
  out.commits = order.size();
  out.complete = true;
  if (order.empty()) {
    // The remote has every gated commit itself: they alone bound the pack.
    for (std::size_t i = 0; i < objs->size(); ++i) {
      git_object* raw_commit = nullptr;
      if (git_object_peel(&raw_commit, (*objs)[i].get(), GIT_OBJECT_COMMIT) != 0) {
        return tl::unexpected(git_failure("peeling " + oids[i]));
      }
      out.hide.push_back(hex_of(*git_object_id(raw_commit)));
      git_object_free(raw_commit);
    }
    out.hide.insert(out.hide.end(), others.begin(), others.end());
    return out;
  }
  OidSet edge;
  for (const auto& c : order) {
    git_commit* raw_commit = nullptr;
    if (git_commit_lookup(&raw_commit, repo, &c) != 0) return tl::unexpected(git_failure("reading a commit"));
    std::unique_ptr<git_commit, CommitDeleter> commit(raw_commit);
    for (unsigned k = 0; k < git_commit_parentcount(commit.get()); ++k) {
      const git_oid* parent = git_commit_parent_id(commit.get(), k);
      if (sent.count(*parent) == 0 && edge.insert(*parent).second) out.hide.push_back(hex_of(*parent));
    }
  }
  out.hide.insert(out.hide.end(), others.begin(), others.end());
  return out;
}

}  // namespace courier::child
