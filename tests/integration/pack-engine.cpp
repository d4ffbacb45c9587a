// pack-engine.cpp — the git pack engine (PackEngine::git): the child
// runs `git pack-objects`, inside its own kill domain, and the remote is read
// back with git afterwards; at the deadline the engine, and whatever it
// started, dies with the child (D2, D3).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <utility>

#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "push_setup.hpp"
#include "support.hpp"
#include "sys/events.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_pack_engine {

using namespace courier;
using sys::kNsPerMs;
using sys::mono_now_ns;

namespace {

using Setup = test::PushSetup;

// A delivery whose pack is built by git pack-objects.
DeliveryRequest engine_request(Setup& s, const std::string& repo_name, const std::string& oid,
                               std::int64_t budget_ms = 30'000) {
  DeliveryRequest r = s.request(repo_name, oid, budget_ms);
  r.pack_engine = PackEngine::git;
  return r;
}

// A stand-in for git written into `dir`: it starts a process of its own in
// the background, reports "ITS_PID DESCENDANT_PID" through the FIFO `report`,
// and waits. It never writes a pack, so only a kill ends it.
std::string wedged_git(const std::string& dir, const std::string& report) {
  const std::string path = dir + "/wedged-git";
  test::write_file(path,
                   "#!/bin/sh\n"
                   "sleep 600 &\n"
                   "echo \"$$ $!\" > '" +
                       report +
                       "'\n"
                       "wait\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

// The FIFO the stand-in reports through, opened for reading before it can
// run (so its write finds a reader), and the report waited for with poll:
// a fact, not a guess. {0, 0} if nothing came by `until`.
class PidReport {
 public:
  explicit PidReport(const std::string& path) : path_(path) {
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    fd_ = sys::ScopedFd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    REQUIRE(fd_.valid());
  }
  const std::string& path() const { return path_; }

  std::pair<pid_t, pid_t> wait(sys::MonoNs until) {
    std::string text;
    while (text.find('\n') == std::string::npos) {
      auto ready = sys::wait_readable_until({fd_.get()}, until);
      if (!ready || ready->empty()) return {0, 0};
      char buf[64];
      auto r = sys::read_nonblocking(fd_.get(), buf, sizeof buf);
      if (!r || r->status == sys::ReadStatus::eof) break;
      if (r->status == sys::ReadStatus::data) text.append(buf, r->bytes);
    }
    long engine = 0, descendant = 0;
    if (std::sscanf(text.c_str(), "%ld %ld", &engine, &descendant) != 2) return {0, 0};
    return {static_cast<pid_t>(engine), static_cast<pid_t>(descendant)};
  }

 private:
  std::string path_;
  sys::ScopedFd fd_;
};

// Running, sleeping or stopped: anything but gone or a zombie.
bool alive(pid_t pid) {
  const char st = sys::proc_state(pid);
  return st != 0 && st != 'Z' && st != 'X';
}

}  // namespace

TEST_SUITE("push") {
  TEST_CASE("T4 git engine: a new ref, then an update, are delivered by git pack-objects and read back fsck-clean") {
    Setup s(5);
    s.server.create_bare_repo("r");
    Executor ex(s.executor_options());
    const std::string older = test::git_ok({"rev-parse", "HEAD~2"}, s.source);
    Outcome first = ex.submit(engine_request(s, "r", older.substr(0, 40))).wait();
    REQUIRE_MESSAGE(first.kind == OutcomeKind::delivered, first.reason);
    CHECK(first.objects == 9u);  // 3 commits, each with its tree and blob
    Outcome second = ex.submit(engine_request(s, "r", s.tip)).wait();
    REQUIRE_MESSAGE(second.kind == OutcomeKind::delivered, second.reason);
    CHECK(second.objects == 6u);  // only what the remote lacks: 2 commits, trees, blobs
    CHECK(second.old_oid == older.substr(0, 40));
    CHECK(s.remote_ref("r") == s.tip);
    CHECK(test::git({"--git-dir", s.server.repo_path("r"), "fsck", "--strict"}).ok());
  }

  TEST_CASE("T4 git engine: an annotated tag is delivered with the commit it points to") {
    Setup s(2);
    s.server.create_bare_repo("r");
    test::git_ok({"tag", "-a", "-m", "release", "v1", s.tip}, s.source);
    const std::string tag = test::git_ok({"rev-parse", "refs/tags/v1"}, s.source).substr(0, 40);
    Executor ex(s.executor_options());
    auto req = engine_request(s, "r", tag);
    req.ref = "refs/tags/v1";
    Outcome o = ex.submit(req).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(o.objects == 7u);  // the tag, 2 commits, their trees and blobs
    CHECK(s.remote_ref("r", "refs/tags/v1") == tag);
    CHECK(test::git({"--git-dir", s.server.repo_path("r"), "fsck", "--strict"}).ok());
  }

  TEST_CASE("git engine: a git that fails ends the delivery failed with git's own words, and no POST is sent") {
    Setup s(2);
    s.server.create_bare_repo("r");
    const std::string bad = s.dir.path() + "/failing-git";
    test::write_file(bad, "#!/bin/sh\necho 'fatal: the pack engine refuses' >&2\nexit 128\n");
    ::chmod(bad.c_str(), 0755);
    Executor ex(s.executor_options());
    auto req = engine_request(s, "r", s.tip);
    req.git_program = bad;
    Outcome o = ex.submit(req).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::failed, o.reason);
    CHECK(o.reason.find("exited with 128") != std::string::npos);
    CHECK(o.reason.find("the pack engine refuses") != std::string::npos);
    CHECK(s.server.count().count("POST /r.git/git-receive-pack") == 0);
    CHECK(s.remote_ref("r").empty());
  }

  TEST_CASE("git engine: a git_program that is not an absolute path is refused before dispatch") {
    Setup s(1);
    Executor ex(s.executor_options());
    auto req = engine_request(s, "r", s.tip);
    req.git_program = "git";
    Outcome o = ex.submit(req).wait();
    CHECK(o.kind == OutcomeKind::failed);
    CHECK_FALSE(o.dispatched);
    CHECK(o.reason.find("absolute path") != std::string::npos);
    CHECK(ex.spawned() == 0);
  }

  TEST_CASE(
      "D2 D3 git engine: at the deadline the pack engine and what it started die with the child, then the stop is "
      "confirmed") {
    for (CgroupMode mode : {CgroupMode::off, CgroupMode::automatic}) {
      const std::string name = mode == CgroupMode::off ? "process group" : "cgroup";
      CAPTURE(name);
      Setup s(2);
      s.server.create_bare_repo("r");
      Executor ex(s.executor_options(mode));
      constexpr std::int64_t kBudgetMs = 4'000;
      auto req = engine_request(s, "r", s.tip, kBudgetMs);
      PidReport report(s.dir.path() + "/engine.fifo");
      req.git_program = wedged_git(s.dir.path(), report.path());
      auto h = ex.submit(req);
      const auto [engine, descendant] = report.wait(mono_now_ns() + kBudgetMs * kNsPerMs);
      REQUIRE_MESSAGE(engine > 0, "the pack engine did not start before the deadline");
      REQUIRE(descendant > 0);
      Outcome o = h.wait();
      const bool engine_alive = alive(engine);
      const bool descendant_alive = alive(descendant);
      if (descendant_alive) (void)::kill(descendant, SIGKILL);  // leave nothing behind, whatever the verdict
      if (engine_alive) (void)::kill(engine, SIGKILL);
      REQUIRE_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
      CHECK(o.seat() == SeatDisposition::release);
      CHECK_MESSAGE(!engine_alive, "the pack engine outlived the delivery (", name, ")");
      CHECK_MESSAGE(!descendant_alive, "the pack engine's own child outlived the delivery (", name, ")");
      test::report("git engine deadline (" + name + ")", "deadline overrun", sys::ns_to_ms(o.timings.kill - o.deadline),
                   "ms");
      CHECK(o.timings.kill - o.deadline < 100 * kNsPerMs);
      CHECK(s.remote_ref("r").empty());
    }
  }
}

}  // namespace integration_pack_engine
