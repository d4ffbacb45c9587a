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

GitStderr::GitStderr(OnProgress on_progress) : on_progress_(std::move(on_progress)) {}

namespace {

// git's meters: the phase's title and the name it is reported by.
struct Meter {
  std::string_view title;
  std::string_view phase;
};
constexpr Meter kMeters[] = {
    {"Enumerating objects:", "enumerate"}, {"Counting objects:", "count"}, {"Compressing objects:", "compress"}};

// "Title: 50% (5/10)..." -> (5, 10); "Title: 9, done." -> (9, 0).
std::pair<std::uint64_t, std::uint64_t> meter_counts(const std::string& segment, std::size_t after_title) {
  const auto open = segment.find('(', after_title);
  const auto slash = open == std::string::npos ? std::string::npos : segment.find('/', open);
  if (slash != std::string::npos) {
    return {std::strtoull(segment.c_str() + open + 1, nullptr, 10),
            std::strtoull(segment.c_str() + slash + 1, nullptr, 10)};
  }
  return {std::strtoull(segment.c_str() + after_title, nullptr, 10), 0};
}

}  // namespace

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
  const Meter* meter = nullptr;
  for (const Meter& m : kMeters) {
    if (starts_with(segment_, m.title)) meter = &m;
  }
  if (meter) {
    const auto [done, total] = meter_counts(segment_, meter->title.size());
    if (on_progress_) on_progress_(meter->phase, done, total);
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
