// send_edge.hpp — what a push must send, bounded by the delivery rather than
// by the remote's advertisement: the ids the remote advertised that this
// repository has (each distinct id looked up once), narrowed to the edge of
// the commits the remote lacks — the hidden commits that are parents of a
// commit the pack sends. A pack built from the gated object minus the edge
// holds exactly the commits it would hold minus every advertised id, and the
// edge's trees are the thin pack's bases, as in `git pack-objects --thin`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "courier/result.hpp"

struct git_repository;

namespace courier::child {

// Commits walked past this count stop the narrowing: a push that large is
// bounded by its own pack, and the hidden ids it keeps are every advertised
// commit this repository has.
inline constexpr std::size_t kEdgeWalkCommits = 20'000;

struct SendEdge {
  // What to hide: the edge when the walk finished, else every advertised
  // commit this repository has; either way with the advertised non-commit
  // ids it has (git can exclude a tagged tree or blob; libgit2 ignores them).
  std::vector<std::string> hide;
  // Distinct advertised ids that this repository has (commits or not).
  std::size_t present = 0;
  // Advertised commits hidden from the walk: 0 means the remote has none of
  // this history.
  std::size_t hidden = 0;
  // Commits the remote lacks, counted up to kEdgeWalkCommits + 1.
  std::size_t commits = 0;
  // Whether the walk finished (hide is the edge).
  bool complete = false;
};

// From the gated objects `oids` (each a commit or an annotated tag of one).
// `advertised` may hold each id many times (every ref of a remote with many
// refs naming one commit) and ids this repository lacks; the views must
// outlive the call. Errors: as check_gated_object, os_error (libgit2
// failures).
Result<SendEdge> find_send_edge(const std::string& repo, const std::vector<std::string>& oids,
                                const std::vector<std::string_view>& advertised);
// The same in a repository already open (the child opens it once per
// delivery).
Result<SendEdge> find_send_edge(git_repository* repo, const std::vector<std::string>& oids,
                                const std::vector<std::string_view>& advertised);

}  // namespace courier::child
