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

  // on_count(done, total) for each "Counting objects: 50% (5/10)" update.
  explicit GitStderr(std::function<void(std::uint64_t, std::uint64_t)> on_count);

  // Bytes as they arrive, split anywhere; lines end at \r or \n.
  void feed(const char* data, std::size_t n);

  // The complaints (the last kKeep bytes, without a final newline), once git
  // has closed stderr.
  std::string finish();

 private:
  void segment_done();

  std::function<void(std::uint64_t, std::uint64_t)> on_count_;
  std::string segment_;
  std::string tail_;
};

}  // namespace courier::child
