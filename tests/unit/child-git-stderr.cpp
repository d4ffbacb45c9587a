// child-git-stderr.cpp — the git pack engine's stderr: git's progress
// meter becomes progress, its complaints become the error text, wherever the
// bytes are split.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "child/git_stderr.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_child_git_stderr {

using courier::child::GitStderr;

namespace {

const std::string kStderr =
    "Enumerating objects: 9, done.\n"
    "Counting objects:  11% (1/9)\rCounting objects:  55% (5/9)\rCounting objects: 100% (9/9)\r"
    "Counting objects: 100% (9/9), done.\n"
    "Delta compression using up to 2 threads\n"
    "Compressing objects: 100% (3/3), done.\n"
    "warning: something the operator should see\n"
    "Total 9 (delta 0), reused 0 (delta 0), pack-reused 0\n";

struct Seen {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> counts;
  std::string tail;
};

Seen scan_in_chunks(const std::string& text, std::size_t chunk) {
  Seen seen;
  GitStderr scan([&seen](std::string_view phase, std::uint64_t done, std::uint64_t total) {
    if (phase == "count") seen.counts.emplace_back(done, total);
  });
  for (std::size_t at = 0; at < text.size(); at += chunk)
    scan.feed(text.data() + at, std::min(chunk, text.size() - at));
  seen.tail = scan.finish();
  return seen;
}

}  // namespace

TEST_SUITE("child") {
  TEST_CASE("git engine: git's counting meter becomes progress and its chatter is not taken for a complaint") {
    for (std::size_t chunk : {kStderr.size(), std::size_t{1}, std::size_t{7}}) {
      CAPTURE(chunk);
      Seen seen = scan_in_chunks(kStderr, chunk);
      const std::vector<std::pair<std::uint64_t, std::uint64_t>> want = {{1, 9}, {5, 9}, {9, 9}, {9, 9}};
      CHECK(seen.counts == want);
      CHECK(seen.tail == "warning: something the operator should see");
    }
  }

  TEST_CASE("git engine: only the last 4 KiB of git's complaints are kept, and a line without an end still counts") {
    std::string many;
    for (int i = 0; i < 1000; ++i) many += "fatal: line " + std::to_string(i) + "\n";
    many += "fatal: the last words";
    Seen seen = scan_in_chunks(many, 100);
    CHECK(seen.tail.size() <= GitStderr::kKeep);
    CHECK(seen.tail.size() > GitStderr::kKeep - 40);
    CHECK(seen.tail.find("fatal: line 999\nfatal: the last words") != std::string::npos);
    CHECK(seen.tail.find("fatal: line 0\n") == std::string::npos);
    CHECK(seen.counts.empty());
  }
}

}  // namespace unit_child_git_stderr
