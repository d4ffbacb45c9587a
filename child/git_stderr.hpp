// git_stderr.hpp — what `git pack-objects --progress` says on stderr, taken
// apart: its progress meter becomes progress callbacks, and the rest (its
// complaints) is kept for the error message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace courier::child {

class GitStderr {
 public:
  // The tail of git's complaints kept (and the longest line looked at).
  static constexpr std::size_t kKeep = 4096;

  // on_progress(phase, done, total) for each meter update git prints, by
  // git's own phase names: "Enumerating objects: 9" is ("enumerate", 9, 0),
  // "Counting objects: 50% (5/10)" ("count", 5, 10) and "Compressing
  // objects: 50% (5/10)" ("compress", 5, 10). "Writing objects" (the pack
  // written into the spool, local and brief) is not reported: the upload
  // is what the user sees as writing.
  using OnProgress = std::function<void(std::string_view, std::uint64_t, std::uint64_t)>;
  explicit GitStderr(OnProgress on_progress);

  // Bytes as they arrive, split anywhere; lines end at \r or \n.
  void feed(const char* data, std::size_t n);

  // The complaints (the last kKeep bytes, without a final newline), once git
  // has closed stderr.
  std::string finish();

 private:
  void segment_done();

  OnProgress on_progress_;
  std::string segment_;
  std::string tail_;
};

}  // namespace courier::child
