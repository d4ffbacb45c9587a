// git_stderr.cpp — git pack-objects' stderr taken apart (see the header).
#include "child/git_stderr.hpp"

#include <cstdlib>
#include <utility>

namespace courier::child {

namespace {

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// The meter lines git prints while it works; none of them is a complaint.
constexpr std::string_view kChatter[] = {
    "Enumerating objects:", "Compressing objects:", "Writing objects:", "Delta compression", "Total "};

}  // namespace

GitStderr::GitStderr(std::function<void(std::uint64_t, std::uint64_t)> on_count) : on_count_(std::move(on_count)) {}

void GitStderr::feed(const char* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const char c = data[i];
    if (c == '\r' || c == '\n') {
      segment_done();
    } else if (segment_.size() < kKeep) {
      segment_.push_back(c);
    }
  }
}

std::string GitStderr::finish() {
  segment_done();
  while (!tail_.empty() && tail_.back() == '\n') tail_.pop_back();
  return tail_;
}

void GitStderr::segment_done() {
  if (segment_.empty()) return;
  if (starts_with(segment_, "Counting objects:")) {
    const auto open = segment_.rfind('(');
    const auto slash = open == std::string::npos ? std::string::npos : segment_.find('/', open);
    if (slash != std::string::npos && on_count_) {
      on_count_(std::strtoull(segment_.c_str() + open + 1, nullptr, 10),
                std::strtoull(segment_.c_str() + slash + 1, nullptr, 10));
    }
  } else {
    bool chatter = false;
    for (auto prefix : kChatter) chatter = chatter || starts_with(segment_, prefix);
    if (!chatter) {
      tail_ += segment_ + "\n";
      if (tail_.size() > kKeep) tail_.erase(0, tail_.size() - kKeep);
    }
  }
  segment_.clear();
}

}  // namespace courier::child
