// pack.hpp — the local half of a push, in the child: open the repository
// read-only in spirit (C3: nothing is ever written into it), check the gated
// object, and build the pack the remote needs: with libgit2's packbuilder
// (pack.cpp) or with `git pack-objects` (pack_git.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "child/send_edge.hpp"
#include "courier/result.hpp"
#include "repo/repository.hpp"
#include "sys/clock.hpp"

struct git_repository;

namespace courier::child {

// The child opens and checks the repository through src/repo/.
using repo::check_gated_object;
using repo::init_libgit2;

struct PackSpec {
  std::string repo;
  // `repo` already open (the child opens it once per delivery; it must
  // outlive the build). Null: each step opens `repo` itself.
  git_repository* opened = nullptr;
  // The gated objects (the new ids of the refs the POST updates, deletions
  // left out): each a commit, or an annotated tag of one. At least one.
  std::vector<std::string> oids;
  std::vector<std::string> hide;  // ids the remote has (advertised refs and .have)
  // The push's edge, when already found for this spec (find_send_edge on
  // repo, oid and hide): the engines hide only its ids. Unset, each engine
  // finds it again.
  std::shared_ptr<const SendEdge> edge;
  sys::MonoNs deadline = 0;
  // What the remote takes, from its advertisement: a thin pack (deltas
  // against objects it has; unless it says `no-thin`), offset deltas
  // (`ofs-delta`). libgit2's packbuilder writes neither (reference deltas
  // against objects in the pack only), so these bind the git engine.
  bool thin = false;
  bool ofs_delta = false;
  // Receives the pack bytes in order. An error stops the build.
  std::function<Result<void>(const void*, std::size_t)> sink;
  // Called with (phase, done, total) as the pack is built, by git's phase
  // names: "enumerate" (objects found so far; total 0, unknown), "count"
  // (the git engine only) and "compress" (objects searched for deltas, of
  // the total).
  std::function<void(std::string_view, std::uint64_t, std::uint64_t)> progress;
};

struct PackResult {
  std::uint64_t objects = 0;
  std::uint64_t bytes = 0;
  // Ids hidden from the walk the packbuilder took its objects from (the
  // libgit2 engine): the edge, never the whole advertisement.
  std::uint64_t hidden = 0;
};

// Errors: as check_gated_object, leg_timeout (deadline while adding
// objects), os_error (libgit2 failures, sink failures).
Result<PackResult> build_pack(const PackSpec& spec);

// Whether a push is small enough that libgit2's packbuilder beats starting
// `git pack-objects` (the automatic engine's choice in the child): the
// remote has part of this history, and at most `max_commits` commits are
// missing from it (max_commits below kEdgeWalkCommits). Errors: as
// check_gated_object, os_error (libgit2).
Result<bool> is_small_push(const PackSpec& spec, std::size_t max_commits);

// What `git pack-objects --revs` needs, read with libgit2: the repository's
// git directory, and its revision lines (the gated ids, then ^id for each
// id of the push's edge; ids this repository lacks cannot be named to git).
struct GitPackPlan {
  std::string git_dir;
  std::string revs;
};
// Errors: as check_gated_object, os_error (libgit2 failures).
Result<GitPackPlan> plan_git_pack(const PackSpec& spec);

// The git pack engine (pack_git.cpp): `git pack-objects` started by the
// child in the child's own process group, so the parent's SIGKILL to the
// kill domain at the deadline ends it with the child. Errors: as
// plan_git_pack, spawn_failed (git could not be started), leg_timeout
// (deadline while packing), os_error (git failed: its exit and stderr;
// sink failures; a pack stream without a valid header).
Result<PackResult> build_pack_with_git(const PackSpec& spec, const std::string& git_program, const std::string& home);

// The git engine as a stream (pack_git.cpp): the pack's bytes as git
// writes them, for a POST body sent while the pack is still being built.
// spec.sink is not used. The destructor kills and reaps a git that is still
// running (an abandoned stream leaves nothing behind).
class GitPackStream {
 public:
  // Starts git and hands it the revisions. Errors: as plan_git_pack,
  // spawn_failed, os_error.
  static Result<std::unique_ptr<GitPackStream>> start(const PackSpec& spec, const std::string& git_program,
                                                      const std::string& home);
  ~GitPackStream();
  GitPackStream(const GitPackStream&) = delete;
  GitPackStream& operator=(const GitPackStream&) = delete;

  // Up to `n` bytes of the pack, waiting until git writes some (git's
  // progress on stderr goes to spec.progress meanwhile), never past the
  // deadline. 0 only at the end of a pack git finished well: exit 0 and a
  // valid header. Errors: leg_timeout (the deadline), os_error (git failed:
  // its exit and stderr; no valid pack header).
  Result<std::size_t> read(char* buf, std::size_t n);
  // The objects and bytes, once read() returned 0.
  const PackResult& result() const;

  struct State;

 private:
  explicit GitPackStream(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

}  // namespace courier::child
