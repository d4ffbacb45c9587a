// update_mode.hpp — (public) how a delivery may move the remote's ref, as
// git decides it for `git push`: a fast-forward only (the default), any
// move (`--force`), or a compare-and-swap on the ref's old id
// (`--force-with-lease=REF:EXPECT`). The words are the job's on the wire.
#pragma once

#include <optional>
#include <string_view>

#include "courier/words.hpp"

namespace courier {

enum class UpdateMode {
  // git's default: a new ref is created; an existing branch moves only to a
  // descendant of its old commit ("non-fast-forward" otherwise, "fetch
  // first" when that commit is not in the local repository, "needs force"
  // when either side is not a commit); an existing tag is never moved
  // ("already exists").
  fast_forward,
  // `git push --force`: whatever the remote has.
  force,
  // `git push --force-with-lease=REF:EXPECT`: only when the remote's ref is
  // at DeliveryRequest::expect_old ("stale info" otherwise; the zero id:
  // the ref must not exist); then any move, as git's lease allows.
  expect_old,
};

inline constexpr WordRow<UpdateMode> kUpdateModeWords[] = {
    {UpdateMode::fast_forward, "fast_forward"}, {UpdateMode::force, "force"}, {UpdateMode::expect_old, "expect_old"}};

constexpr std::string_view update_mode_word(UpdateMode m) { return word_of(kUpdateModeWords, m); }

// nullopt: not an update mode's word.
constexpr std::optional<UpdateMode> update_mode_from_word(std::string_view word) {
  return value_of(kUpdateModeWords, word);
}

}  // namespace courier
