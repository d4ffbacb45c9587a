// supervisor.cpp — rules C1, D1–D4, P2, S2, S3, A4 against real child
// processes: the stand-ins in fixtures/standin.cpp, and this test binary
// itself as the real `__delivery-push` child.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "report/outcome_json.hpp"
#include "supervisor/host_calls.hpp"
#include "supervisor/kill_domain.hpp"
#include "supervisor/supervisor.hpp"
#include "support.hpp"
#include "sys/cgroup.hpp"
#include "sys/events.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_supervisor {

using namespace courier;
using namespace courier::supervisor;
using sys::kNsPerMs;
using sys::mono_now_ns;

namespace {

const std::string kOid(40, 'a');

SupervisorOptions standin(const std::string& scenario, std::int64_t budget_ms,
                          CgroupMode mode = CgroupMode::automatic) {
  SupervisorOptions o;
  o.child_program = COURIER_STANDIN;
  o.job.repo = scenario;
  o.job.remote = "https://127.0.0.1:9/r.git";
  o.job.updates = {RefUpdate{"refs/heads/main", kOid}};
  o.deadline = mono_now_ns() + budget_ms * kNsPerMs;
  o.cgroup = mode;
  o.on_stderr = [](std::string_view) {};
  return o;
}

bool cgroups_usable(std::string& why) {
  auto p = sys::Cgroup::find_parent();
  if (!p) {
    why = p.error().message;
    return false;
  }
  auto probe = sys::Cgroup::create(*p, "git-courier-probe-" + std::to_string(getpid()));
  if (!probe) {
    why = probe.error().message;
    return false;
  }
  return true;
}

// The process is gone and was reaped by us: kill(pid, 0) says ESRCH, and
// waitid on it (any child kind) says ECHILD.
void check_gone_and_reaped(std::int64_t pid) {
  REQUIRE(pid > 0);
  errno = 0;
  CHECK_MESSAGE(::kill(static_cast<pid_t>(pid), 0) == -1, "child pid still exists after the outcome");
  CHECK(errno == ESRCH);
  siginfo_t info{};
  errno = 0;
  CHECK(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | __WALL) == -1);
  CHECK_MESSAGE(errno == ECHILD, "the child was not reaped by the supervisor");
}

void check_confirmed(const Outcome& o) {
  CHECK(o.child.reaped);
  CHECK(o.child.stdout_eof);
  CHECK(o.child.stderr_eof);
  if (o.child.cgroup) CHECK(o.child.cgroup_empty);
  CHECK(o.timings.confirmed != 0);
  CHECK(o.seat() == SeatDisposition::release);
}

// "holder N" lines the stand-ins print for their forked descendants.
std::vector<pid_t> holders(const std::string& err) {
  std::vector<pid_t> out;
  std::regex re("holder ([0-9]+)");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back(static_cast<pid_t>(std::stol((*it)[1])));
  }
  return out;
}

// The test process as a child subreaper for one case only, so that the
// orphans of later cases go to init as before.
struct SubreaperScope {
  SubreaperScope() = default;
  SubreaperScope(const SubreaperScope&) = delete;
  SubreaperScope& operator=(const SubreaperScope&) = delete;
  ~SubreaperScope() { (void)sys::set_child_subreaper(false); }
};

// Kills an escapee the product left alive (under a mutant, or by design when
// it is not a subreaper) and reaps it if it came back to us: no trace.
void kill_escapee(pid_t pid) {
  auto fd = sys::pidfd_open(pid);
  if (!fd) return;
  (void)sys::pidfd_signal(fd->get(), SIGKILL);
  (void)sys::wait_readable_until({fd->get()}, mono_now_ns() + 5'000 * kNsPerMs);
  if (auto st = sys::proc_stat(pid); st && st->ppid == getpid()) (void)sys::reap(fd->get());
}

// One run of an escaping stand-in: its outcome, what it printed, its one
// escapee and that escapee's state right after the outcome (0: gone). The
// state is read before the escapee is cleaned up, so the caller judges it
// and a failing run still leaves nothing behind.
struct Escape {
  Outcome o;
  std::string err;
  pid_t escapee = 0;
  char state = 0;
};

Escape run_escape(const std::string& scenario, CgroupMode mode, bool subreaper, std::int64_t budget_ms = 10'000) {
  auto opt = standin(scenario, budget_ms, mode);
  opt.subreaper = subreaper;
  Escape e;
  opt.on_stderr = [&e](std::string_view s) { e.err.append(s); };
  Supervisor sup(opt);
  e.o = sup.run();
  auto hs = holders(e.err);
  REQUIRE(hs.size() == 1);
  e.escapee = hs[0];
  e.state = sys::proc_state(hs[0]);
  if (e.state != 0) kill_escapee(hs[0]);
  return e;
}

long max_rss_kib() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

}  // namespace

TEST_SUITE("supervisor") {
  TEST_CASE("D1 D2: a child that ignores SIGTERM and blocks forever is killed at the deadline and reaped") {
    for (auto mode : {CgroupMode::off, CgroupMode::automatic}) {
      auto opt = standin("wedge", 300, mode);
      const auto deadline = opt.deadline;
      Supervisor sup(opt);
      Outcome o = sup.run();
      REQUIRE_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
      check_confirmed(o);
      CHECK(o.child.signal == SIGKILL);
      REQUIRE(o.deadline_overrun().has_value());
      const double overrun_ms = sys::ns_to_ms(*o.deadline_overrun());
      const double release_ms = sys::ns_to_ms(o.timings.confirmed - deadline);
      test::report("deadline kill", mode == CgroupMode::off ? "overrun (pgroup)" : "overrun (auto)", overrun_ms, "ms");
      test::report("deadline kill", "deadline to seat ready", release_ms, "ms");
      CHECK(overrun_ms >= 0);
      CHECK(overrun_ms < 100);
      // D4: the stated bound.
      CHECK(o.timings.confirmed - deadline < kReapBound + kEofBound);
      check_gone_and_reaped(o.child.pid);
    }
  }

  TEST_CASE("D2: the deadline kill lands while the supervising thread is parked in a host callback") {
    auto opt = standin("progress-then-wedge", 400);
    const auto deadline = opt.deadline;
    test::Latch parked, release;
    std::atomic<std::int64_t> pid{0};
    // The conversation tap is the one host callback that runs on the drive
    // loop itself (the observers run on a notifier thread): parked in it on
    // the child's progress frame, the loop can neither kill nor reap.
    opt.on_frame = [parked, release](bool to_child, std::string_view body) {
      if (to_child || body.find("\"progress\"") == std::string_view::npos) return;
      parked.open();
      release.wait(60'000);  // host code that does not return until the test says so
    };
    Supervisor sup(opt);
    Outcome o;
    std::thread t([&] { o = sup.run(); });
    REQUIRE(parked.wait(10'000));
    pid = sup.child_pid();
    auto pidfd = sys::pidfd_open(static_cast<pid_t>(pid.load()));
    REQUIRE(pidfd);
    // The fact we wait for: the child's pidfd turns readable when it dies.
    auto ready = sys::wait_readable_until({pidfd->get()}, deadline + 2'000 * kNsPerMs);
    const auto observed = mono_now_ns();
    const bool killed_while_parked = ready && !ready->empty();
    CHECK_MESSAGE(killed_while_parked,
                  "the child was not killed at the deadline while the supervising thread was parked");
    CHECK(sys::proc_state(static_cast<pid_t>(pid.load())) == 'Z');  // dead, not yet reaped: the loop is parked
    release.open();
    t.join();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
    check_confirmed(o);
    test::report("parked supervisor", "deadline to death observed", sys::ns_to_ms(observed - deadline), "ms");
    test::report("parked supervisor", "kill overrun", sys::ns_to_ms(*o.deadline_overrun()), "ms");
    CHECK(*o.deadline_overrun() < 100 * kNsPerMs);
    check_gone_and_reaped(o.child.pid);
  }

  TEST_CASE("S2 D3: a grandchild in the same group that inherited stdout is killed too, and its EOF is awaited") {
    auto opt = standin("grandchild", 10'000, CgroupMode::off);
    std::string err;
    opt.on_stderr = [&](std::string_view s) { err.append(s); };
    Supervisor sup(opt);
    Outcome o = sup.run();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    check_confirmed(o);
    auto hs = holders(err);
    REQUIRE(hs.size() == 1);
    const char st = sys::proc_state(hs[0]);
    CHECK_MESSAGE((st == 0 || st == 'Z'), "the grandchild is still alive after the confirmed stop: state ", st);
    CHECK(o.child.census.empty());
  }

  TEST_CASE("S3 S2: a setsid escapee holding stdout is unconfirmed in process-group mode and the seat is retained") {
    auto opt = standin("escapee", 10'000, CgroupMode::off);
    opt.eof_bound = 300 * kNsPerMs;
    std::string err;
    opt.on_stderr = [&](std::string_view s) { err.append(s); };
    const auto before = unconfirmed_children();
    Supervisor sup(opt);
    Outcome o = sup.run();
    auto hs = holders(err);
    REQUIRE(hs.size() == 1);
    CHECK_MESSAGE(o.kind == OutcomeKind::cleanup_unbounded, "escapee outcome: ", outcome_name(o.kind), " ", o.reason);
    CHECK_MESSAGE(o.seat() == SeatDisposition::retain, "an unconfirmed stop released the seat");
    CHECK_MESSAGE(unconfirmed_children() == before + 1, "the unconfirmed-children count was not incremented");
    CHECK(o.child.reaped);
    CHECK_FALSE(o.child.stdout_eof);
    // The work that may still run keeps its scratch directory, named.
    CHECK(o.kill_domain == "process_group");
    CHECK_MESSAGE(!o.scratch_kept.empty(), "an unconfirmed stop did not keep its scratch directory");
    CHECK(std::filesystem::is_directory(o.scratch_kept));
    // Clean up what the product, correctly, could not.
    ::kill(hs[0], SIGKILL);
    std::filesystem::remove_all(o.scratch_kept);
  }

  TEST_CASE("S3: a setsid escapee is killed through the cgroup, and the stop is confirmed") {
    std::string why;
    if (!cgroups_usable(why)) {
      MESSAGE("skipped: cgroups are not writable here: " << why);
      return;
    }
    auto opt = standin("escapee", 10'000, CgroupMode::required);
    std::string err;
    opt.on_stderr = [&](std::string_view s) { err.append(s); };
    Supervisor sup(opt);
    Outcome o = sup.run();
    auto hs = holders(err);
    REQUIRE(hs.size() == 1);
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    check_confirmed(o);
    CHECK(o.child.cgroup);
    const char st = sys::proc_state(hs[0]);
    CHECK_MESSAGE((st == 0 || st == 'Z'), "the escapee survived the cgroup kill: state ", st);
  }

  TEST_CASE(
      "S2 S3: an escapee that left the cgroup and the session and closed its pipes is killed and reaped by the "
      "subreaper before the stop is confirmed") {
    std::string why;
    if (!cgroups_usable(why)) {
      MESSAGE("skipped: cgroups are not writable here: " << why);
      return;
    }
    SubreaperScope scope;
    const Escape e = run_escape("cgroup-escapee", CgroupMode::required, true);
    CHECK_MESSAGE(e.err.find("escaped-cgroup 1") != std::string::npos, "the escapee did not leave the cgroup: ", e.err);
    CHECK_MESSAGE(e.state == 0, "the stop was confirmed while the escapee lived: state ", e.state);
    REQUIRE_MESSAGE(e.o.kind == OutcomeKind::delivered, e.o.reason);
    check_confirmed(e.o);
    CHECK(e.o.child.cgroup);
    CHECK(e.o.child.subreaped);
    CHECK(e.o.child.strays == std::vector<std::int64_t>{e.escapee});
  }

  TEST_CASE(
      "S2 S3: a double-forked setsid escapee with its pipes closed is killed and reaped by the subreaper before the "
      "stop is confirmed (process-group mode)") {
    SubreaperScope scope;
    const Escape e = run_escape("double-fork-escapee", CgroupMode::off, true);
    CHECK_MESSAGE(e.state == 0, "the stop was confirmed while the escapee lived: state ", e.state);
    REQUIRE_MESSAGE(e.o.kind == OutcomeKind::delivered, e.o.reason);
    check_confirmed(e.o);
    CHECK(e.o.child.census.empty());
    CHECK(e.o.child.subreaped);
    CHECK(e.o.child.strays == std::vector<std::int64_t>{e.escapee});
  }

  // Between our kill and the reap the loop does not watch the pipes; the
  // escapee here closes them only when it is claimed, after the reap, so
  // their end-of-file is seen only if they are watched again.
  TEST_CASE(
      "S2: a child killed at its deadline while its setsid escapee holds its pipes is confirmed by end-of-file read "
      "after the reap, once the escapee is claimed (process-group mode)") {
    SubreaperScope scope;
    const Escape e = run_escape("escapee-then-wedge", CgroupMode::off, true, 300);
    CHECK_MESSAGE(e.o.kind == OutcomeKind::deadline_killed,
                  "the stop was not confirmed after the reap: ", outcome_name(e.o.kind), " ", e.o.reason);
    CHECK(e.o.child.stdout_eof);
    CHECK(e.o.child.stderr_eof);
    CHECK(e.o.timings.stdout_eof >= e.o.timings.reaped);
    CHECK(e.o.child.strays == std::vector<std::int64_t>{e.escapee});
  }

  TEST_CASE(
      "S2 S3: with subreaping a setsid escapee holding stdout is killed and reaped at the reap, so its end-of-file "
      "comes and the stop is confirmed (process-group mode)") {
    SubreaperScope scope;
    const Escape e = run_escape("escapee", CgroupMode::off, true);
    CHECK_MESSAGE(e.state == 0, "the escapee holding stdout outlived the stop: state ", e.state);
    REQUIRE_MESSAGE(e.o.kind == OutcomeKind::delivered, e.o.reason);
    check_confirmed(e.o);
    CHECK(e.o.child.strays == std::vector<std::int64_t>{e.escapee});
  }

  TEST_CASE(
      "S2 S3: without subreaping an escapee is outside the claim, and the outcome says the stop covers the kill domain "
      "only") {
    REQUIRE(sys::set_child_subreaper(false).has_value());
    // The escapee leaves the group and closes its pipes; the child then
    // waits for the deadline's kill, whose reason says what was confirmed.
    // run_escape kills the escapee the product, by design, could not see.
    const Escape e = run_escape("double-fork-escapee-then-wedge", CgroupMode::off, false, 1'000);
    REQUIRE_MESSAGE(e.o.kind == OutcomeKind::deadline_killed, e.o.reason);
    check_confirmed(e.o);
    CHECK_FALSE(e.o.child.subreaped);
    CHECK(e.o.child.strays.empty());
    CHECK_MESSAGE(e.state != 0, "the escapee was expected to outlive a kill-domain-only stop");
    CAPTURE(e.o.reason);
    CHECK_MESSAGE(e.o.reason.find("stop confirmed for its process group (a member that left the group and closed its "
                                  "pipes would not be seen)") != std::string::npos,
                  "the reason does not say that the stop covers the process group only");
    CHECK(e.o.reason.find("every orphan") == std::string::npos);
    const auto j = report::outcome_to_json(e.o, report::OutcomeFacts{});
    CHECK(j["kill_domain"] == "process_group");
    CHECK(j["child"]["stop_scope"] == "kill_domain");
  }

  TEST_CASE("S2: a child that closes its pipes early is at EOF but not confirmed until it is reaped") {
    auto opt = standin("close-stdout-then-wedge", 400);
    const auto deadline = opt.deadline;
    Supervisor sup(opt);
    Outcome o = sup.run();
    CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, "closed-pipes outcome: ", outcome_name(o.kind), " ",
                  o.reason);
    CHECK(o.timings.confirmed >= deadline);
    check_confirmed(o);
    check_gone_and_reaped(o.child.pid);
  }

  TEST_CASE(
      "S2: a child that closes both pipes at once is at EOF on both, and still not confirmed until it is reaped") {
    auto opt = standin("close-pipes-then-wedge", 400, CgroupMode::off);
    const auto deadline = opt.deadline;
    Supervisor sup(opt);
    Outcome o = sup.run();
    const auto pid = static_cast<pid_t>(o.child.pid);
    CHECK_MESSAGE(o.timings.confirmed >= deadline,
                  "supervision ended before the deadline kill and the reap: end-of-file alone was taken as the stop (",
                  std::string(outcome_name(o.kind)), ": ", o.reason, ")");
    CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, "closed-pipes outcome: ", std::string(outcome_name(o.kind)),
                  " ", o.reason);
    check_confirmed(o);
    if (!o.child.reaped && pid > 0) {
      // A supervisor that let go of a live child: do not leave it behind.
      ::kill(pid, SIGKILL);
      siginfo_t info{};
      ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | __WALL);
    } else {
      check_gone_and_reaped(o.child.pid);
    }
  }

  TEST_CASE(
      "S3 D4: end-of-file missing after the reap ends supervision within EOF_BOUND, not when the holder lets go") {
    auto opt = standin("escapee", 30'000, CgroupMode::off);
    opt.eof_bound = 300 * kNsPerMs;
    auto err = std::make_shared<std::pair<std::mutex, std::string>>();
    opt.on_stderr = [err](std::string_view s) {
      std::lock_guard<std::mutex> lock(err->first);
      err->second.append(s);
    };
    Supervisor sup(opt);
    Outcome o;
    test::Latch finished;
    const auto start = mono_now_ns();
    std::thread t([&, finished] {
      o = sup.run();
      finished.open();
    });
    // The holder never lets go by itself: only the bound can end this.
    const bool ended = finished.wait(5'000);
    const double took_ms = sys::ns_to_ms(mono_now_ns() - start);
    CHECK_MESSAGE(ended, "the supervisor was still waiting for end-of-file ", took_ms,
                  " ms in, with EOF_BOUND at 300 ms: the bound was not kept");
    std::vector<pid_t> hs;
    {
      std::lock_guard<std::mutex> lock(err->first);
      hs = holders(err->second);
    }
    // Clean up what the product, correctly, could not (and let a supervisor
    // that would wait forever see its EOF).
    for (pid_t h : hs) ::kill(h, SIGKILL);
    t.join();
    REQUIRE(hs.size() == 1);
    CHECK_MESSAGE(o.kind == OutcomeKind::cleanup_unbounded, "outcome: ", std::string(outcome_name(o.kind)), " ",
                  o.reason);
    CHECK(o.seat() == SeatDisposition::retain);
    if (ended) test::report("EOF bound", "reap to unconfirmed outcome (bound 300 ms)", took_ms, "ms");
  }

  TEST_CASE("P2: a child that never reads its stdin while the parent has frames to write is killed at the deadline") {
    auto opt = standin("never-read", 1'500);
    const auto deadline = opt.deadline;
    std::atomic<int> asked{0};
    opt.authority = [&](const std::string&) {
      ++asked;
      return AuthorityAnswer{true, ""};
    };
    Supervisor sup(opt);
    Outcome o = sup.run();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
    check_confirmed(o);
    test::report("never-read child", "authority answers queued", asked.load(), "answers");
    test::report("never-read child", "kill overrun", sys::ns_to_ms(*o.deadline_overrun()), "ms");
    CHECK(asked.load() > 100);  // the traffic was real
    CHECK(*o.deadline_overrun() < 100 * kNsPerMs);
    CHECK(o.timings.confirmed - deadline < kReapBound + kEofBound);
    CHECK(HostCalls::wait_idle(5'000));
  }

  TEST_CASE("P2: a child flooding 100 MiB of stderr cannot stall the loop; relay is capped and memory bounded") {
    const long rss_before = max_rss_kib();
    auto opt = standin("stderr-flood", 30'000);
    std::size_t relayed = 0;
    opt.on_stderr = [&](std::string_view s) { relayed += s.size(); };
    const auto start = mono_now_ns();
    Supervisor sup(opt);
    Outcome o = sup.run();
    const auto took = mono_now_ns() - start;
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    check_confirmed(o);
    CHECK_MESSAGE(relayed == kStderrRelayCap, "the stderr relay went past its cap: ", relayed, " bytes relayed");
    CHECK(o.stderr_relayed == kStderrRelayCap);
    CHECK(o.stderr_dropped == 100ull * 1024 * 1024 - kStderrRelayCap);
    const long rss_after = max_rss_kib();
    test::report("stderr flood", "time to drain 100 MiB", sys::ns_to_ms(took), "ms");
    test::report("stderr flood", "peak RSS growth", static_cast<double>(rss_after - rss_before) / 1024.0, "MiB");
    test::report("stderr flood", "peak RSS", static_cast<double>(rss_after) / 1024.0, "MiB");
    CHECK(rss_after - rss_before < 32 * 1024);
  }

  TEST_CASE("P2: a child flooding small valid frames cannot stall the loop; the deadline is met") {
    const long rss_before = max_rss_kib();
    auto opt = standin("frame-flood", 800);
    std::uint64_t frames = 0;                // counted on the loop, as each frame is read
    std::atomic<std::uint64_t> observed{0};  // what the host's observer saw, coalesced
    opt.on_frame = [&](bool to_child, std::string_view) { frames += to_child ? 0 : 1; };
    opt.on_progress = [&](const protocol::Progress&) { ++observed; };
    Supervisor sup(opt);
    Outcome o = sup.run();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
    check_confirmed(o);
    test::report("frame flood", "progress frames handled", static_cast<double>(frames), "frames");
    test::report("frame flood", "progress calls to the host (coalesced)", static_cast<double>(observed.load()),
                 "calls");
    test::report("frame flood", "kill overrun", sys::ns_to_ms(*o.deadline_overrun()), "ms");
    test::report("frame flood", "peak RSS growth", static_cast<double>(max_rss_kib() - rss_before) / 1024.0, "MiB");
    CHECK(frames > 1000);
    CHECK(*o.deadline_overrun() < 100 * kNsPerMs);
    CHECK(max_rss_kib() - rss_before < 32 * 1024);
  }

  TEST_CASE("P1: every protocol violation is a protocol fault, and the stop is confirmed") {
    struct Case {
      const char* scenario;
      bool authenticated;
      const char* needle;
    };
    for (const Case& c :
         std::vector<Case>{{"oversized-frame", false, "over the cap"},
                           {"truncated-frame", false, "end of file inside a frame body"},
                           {"garbage-frame", false, "not valid JSON"},
                           {"hello-twice", false, "second hello"},
                           {"result-before-hello", false, "before hello"},
                           {"ungated-result", false, "while not every ref of its result says so"},
                           {"result-wrong-ref", false, "but the job's is 'refs/heads/main'"},
                           {"result-without-oid", false, "as ref 1 of its result, but the job's is 'refs/heads/main'"},
                           {"duplicate-key", false, "'status' twice in one object"},
                           {"mint-flood", true, "more than 8 tokens"},
                           {"mint-then-wedge", false, "unauthenticated job"},
                           {"exit-after-hello", false, "exited without a result"}}) {
      CAPTURE(c.scenario);
      auto opt = standin(c.scenario, 20'000);
      opt.job.authenticated = c.authenticated;
      opt.mint = [](const MintRequest&) { return MintAnswer{std::string("Authorization: Bearer t"), ""}; };
      const auto start = mono_now_ns();
      Supervisor sup(opt);
      Outcome o = sup.run();
      CHECK_MESSAGE(o.kind == OutcomeKind::protocol_fault, c.scenario, ": ", outcome_name(o.kind), " ", o.reason);
      CHECK_MESSAGE(o.reason.find(c.needle) != std::string::npos, o.reason);
      check_confirmed(o);
      CHECK(mono_now_ns() - start < 5'000 * kNsPerMs);  // ended by the fault, not by the deadline
      check_gone_and_reaped(o.child.pid);
    }
    CHECK(HostCalls::wait_idle(5'000));
  }

  TEST_CASE("P2: the host-call queue takes at most kMaxPending requests; one it refuses is never run, never answered") {
    auto made = sys::EventFd::create();
    REQUIRE(made);
    auto wake = std::make_shared<sys::EventFd>(std::move(*made));
    test::Latch parked, release;
    std::atomic<int> ran{0};
    std::atomic<bool> refused_ran{false};
    {
      HostCalls calls(wake);
      REQUIRE(calls.submit(HostRequest::Kind::check, "first", [&ran, parked, release](HostAnswer& a) {
        ++ran;
        parked.open();
        release.wait(10'000);
        a.ok = true;
      }));
      REQUIRE(parked.wait(10'000));
      for (std::size_t i = 1; i < HostCalls::kMaxPending; ++i) {
        REQUIRE(calls.submit(HostRequest::Kind::check, "queued", [&ran](HostAnswer& a) {
          ++ran;
          a.ok = true;
        }));
      }
      CHECK(calls.pending() == HostCalls::kMaxPending);
      CHECK_FALSE(calls.submit(HostRequest::Kind::check, "over", [&refused_ran](HostAnswer& a) {
        refused_ran = true;
        a.ok = true;
      }));
      release.open();
      std::deque<HostAnswer> answers;
      const auto until = mono_now_ns() + 10'000 * kNsPerMs;
      while (answers.size() < HostCalls::kMaxPending && mono_now_ns() < until) {
        (void)sys::wait_readable_until({wake->fd()}, until);
        wake->drain();
        for (auto& a : calls.take_answers()) answers.push_back(std::move(a));
      }
      CHECK(answers.size() == HostCalls::kMaxPending);
      for (const auto& a : answers) CHECK(a.key != "over");
    }
    CHECK(ran.load() == static_cast<int>(HostCalls::kMaxPending));
    CHECK_FALSE(refused_ran.load());
    CHECK(HostCalls::wait_idle(5'000));
  }

  TEST_CASE(
      "P2: more checks in flight than the host-call queue holds are each put to authority in turn: none dropped, none "
      "granted unasked") {
    auto opt = standin("check-flood", 8'000);
    std::atomic<int> asked{0}, granted{0}, child_frames{0}, grants_written{0};
    test::Latch parked;
    test::Latch read_past_room;
    // The first check parks authority until the loop has read a check past
    // the queue's room (the frame tap says so), or for a second: a loop that
    // dropped what the queue could not take has then dropped it; one that
    // waits never reads it, and the second is only how long we give it.
    opt.authority = [&asked, &granted, parked, read_past_room](const std::string&) {
      if (++asked == 1) {
        parked.open();
        (void)read_past_room.wait(1'000);
      }
      ++granted;
      return AuthorityAnswer{true, ""};
    };
    opt.on_frame = [&child_frames, &grants_written, read_past_room](bool to_child, std::string_view body) {
      // hello, the first check, then more checks than the queue holds
      if (!to_child && ++child_frames >= 1 + 1 + static_cast<int>(HostCalls::kMaxPending)) read_past_room.open();
      if (to_child && body.find("\"type\":\"authority\"") != std::string_view::npos &&
          body.find("\"ok\":true") != std::string_view::npos) {
        ++grants_written;
      }
    };
    std::mutex err_mu;
    std::string err;
    opt.on_stderr = [&](std::string_view s) {
      std::lock_guard<std::mutex> lock(err_mu);
      err.append(s);
    };
    Supervisor sup(opt);
    Outcome o = sup.run();
    CHECK_MESSAGE(o.kind == OutcomeKind::delivered,
                  "a check the host-call queue could not take was dropped: ", std::string(outcome_name(o.kind)), " ",
                  o.reason, " ", err);
    check_confirmed(o);
    CHECK(parked.is_open());
    CHECK(asked.load() == 40);
    CHECK_MESSAGE(grants_written.load() == granted.load(), "a grant reached the child that authority never gave");
    std::lock_guard<std::mutex> lock(err_mu);
    CHECK(err.find("answers granted=40 refused=0") != std::string::npos);
    CHECK(HostCalls::wait_idle(5'000));
  }

  TEST_CASE("A4: revocation of a working child kills it at once and the outcome is revoked, stop confirmed") {
    auto opt = standin("progress-then-wedge", 30'000);
    test::Latch working;
    opt.on_progress = [working](const protocol::Progress&) { working.open(); };
    Supervisor sup(opt);
    Outcome o;
    test::Latch ended;
    std::thread t([&] {
      o = sup.run();
      ended.open();
    });
    REQUIRE(working.wait(10'000));
    const auto revoked_at = mono_now_ns();
    sup.revoke("the host withdrew the delivery");
    // The stop is confirmed within 500 ms (checked below). A revocation
    // that kills nothing would leave the child to its 30 s deadline: the
    // case fails on that fact after 5 s and ends the child itself, so that
    // it does not wait the deadline out.
    const bool ended_in_time = ended.wait(5'000);
    if (!ended_in_time) ::kill(static_cast<pid_t>(sup.child_pid()), SIGKILL);
    t.join();
    REQUIRE_MESSAGE((ended_in_time && o.kind == OutcomeKind::revoked), "revocation did not kill the child: ", o.reason);
    check_confirmed(o);
    const double reaction_ms = sys::ns_to_ms(o.timings.confirmed - revoked_at);
    test::report("revocation", "revoke() to stop confirmed", reaction_ms, "ms");
    CHECK(o.reason.find("the host withdrew the delivery") != std::string::npos);
    CHECK_MESSAGE(reaction_ms < 500, "revocation took ", reaction_ms, " ms to confirm");
    check_gone_and_reaped(o.child.pid);
  }

  TEST_CASE("A4: an authority refusal at a check ends the delivery as revoked") {
    auto opt = standin("check-then-wedge", 30'000);
    opt.authority = [](const std::string&) { return AuthorityAnswer{false, "turn ended"}; };
    const auto start = mono_now_ns();
    Supervisor sup(opt);
    Outcome o = sup.run();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::revoked, o.reason);
    check_confirmed(o);
    CHECK(mono_now_ns() - start < 5'000 * kNsPerMs);
    CHECK(HostCalls::wait_idle(5'000));
  }

  TEST_CASE("A3: a token minted while authority was withdrawn is dropped in the parent and never reaches the child") {
    auto opt = standin("mint-report-check", 30'000);
    opt.job.authenticated = true;
    std::atomic<bool> withdrawn{false};
    std::atomic<int> mints{0};
    opt.mint = [&](const MintRequest&) {
      ++mints;
      withdrawn = true;  // the turn ends while the minter is at work
      return MintAnswer{std::string("Authorization: Bearer a3-token-minted-after-revocation"), ""};
    };
    opt.authority = [&](const std::string&) {
      return withdrawn.load() ? AuthorityAnswer{false, "the turn ended while minting"} : AuthorityAnswer{true, ""};
    };
    auto err = std::make_shared<std::pair<std::mutex, std::string>>();
    opt.on_stderr = [err](std::string_view s) {
      std::lock_guard<std::mutex> lock(err->first);
      err->second.append(s);
    };
    const auto start = mono_now_ns();
    Supervisor sup(opt);
    Outcome o = sup.run();
    std::string said;
    {
      std::lock_guard<std::mutex> lock(err->first);
      said = err->second;
    }
    CHECK(mints.load() == 1);
    CHECK_MESSAGE(said.find("a3-token") == std::string::npos,
                  "the token minted for a revoked delivery reached the child: ", said);
    CHECK_MESSAGE(o.kind == OutcomeKind::revoked, std::string(outcome_name(o.kind)), " ", o.reason);
    check_confirmed(o);
    CHECK(mono_now_ns() - start < 5'000 * kNsPerMs);
    CHECK(HostCalls::wait_idle(5'000));
  }

  TEST_CASE("A1: the child's environment holds only the names the design allows: no GIT_ variable, no secret") {
    ::setenv("GIT_DIR", "/should/not/pass", 1);
    ::setenv("GIT_SSH_COMMAND", "false", 1);
    ::setenv("COURIER_TEST_SECRET", "hunter2", 1);
    SupervisorOptions opt = standin("deliver", 10'000);
    Supervisor sup(opt);
    Outcome o = sup.run();
    ::unsetenv("GIT_DIR");
    ::unsetenv("GIT_SSH_COMMAND");
    ::unsetenv("COURIER_TEST_SECRET");
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    // The design's list, written out here rather than read from the product.
    const std::set<std::string> design = {"PATH", "HOME", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR", "LANG", "TZ"};
    for (auto name : kChildEnvAllowlist) {
      CHECK_MESSAGE(design.count(std::string(name)) == 1,
                    "the allowlist names a variable the design does not allow: ", std::string(name));
    }
    REQUIRE_FALSE(o.child_env_keys.empty());
    for (const auto& key : o.child_env_keys) {
      CHECK_MESSAGE(design.count(key) == 1, "the child received a variable outside the design's allowlist: ", key);
    }
  }

  TEST_CASE("S5: revocation before run() spawns nothing: cancelled_no_dispatch") {
    auto opt = standin("deliver", 10'000);
    Supervisor sup(opt);
    sup.revoke("changed my mind");
    Outcome o = sup.run();
    CHECK(o.kind == OutcomeKind::cancelled_no_dispatch);
    CHECK_FALSE(o.dispatched);
    CHECK(o.child.pid == 0);
    CHECK(o.seat() == SeatDisposition::release);
  }

  TEST_CASE("a delivering child's result becomes the outcome, after the stop is confirmed") {
    for (auto [scenario, kind] : {std::pair{"deliver", OutcomeKind::delivered}, {"reject", OutcomeKind::rejected}}) {
      auto opt = standin(scenario, 10'000);
      Supervisor sup(opt);
      Outcome o = sup.run();
      CHECK_MESSAGE(o.kind == kind, o.reason);
      check_confirmed(o);
    }
    // A child that sends its result and then does not exit is stopped after
    // the grace period, and the result stands.
    auto opt = standin("result-then-wedge", 10'000);
    Supervisor sup(opt);
    Outcome o = sup.run();
    CHECK_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    check_confirmed(o);
    CHECK(o.child.signal == SIGKILL);
  }

  TEST_CASE("S2 S3: the release rule, outcome by outcome") {
    const std::vector<std::pair<OutcomeKind, SeatDisposition>> table = {
        {OutcomeKind::delivered, SeatDisposition::release},
        {OutcomeKind::up_to_date, SeatDisposition::release},
        {OutcomeKind::rejected, SeatDisposition::release},
        {OutcomeKind::failed, SeatDisposition::release},
        {OutcomeKind::cancelled_no_dispatch, SeatDisposition::release},
        {OutcomeKind::revoked, SeatDisposition::release},
        {OutcomeKind::deadline_killed, SeatDisposition::release},
        {OutcomeKind::auth_failed, SeatDisposition::release},
        {OutcomeKind::transport_failed, SeatDisposition::release},
        {OutcomeKind::protocol_fault, SeatDisposition::release},
        {OutcomeKind::spawn_failed, SeatDisposition::release},
        {OutcomeKind::lane_poisoned, SeatDisposition::release},
        {OutcomeKind::unreaped, SeatDisposition::retain},
        {OutcomeKind::wait_failed, SeatDisposition::retain},
        {OutcomeKind::cleanup_unbounded, SeatDisposition::retain},
        {OutcomeKind::cleanup_unobserved, SeatDisposition::retain},
        {OutcomeKind::domain_populated, SeatDisposition::retain},
    };
    for (auto [kind, seat] : table) {
      CAPTURE(outcome_name(kind));
      CHECK(release_rule(kind) == seat);
    }
  }

  TEST_CASE("A1 C1: the real child receives exactly [exe, __delivery-push] and only the allowlisted environment") {
    ::setenv("GIT_DIR", "/should/not/pass", 1);
    ::setenv("COURIER_TEST_SECRET", "hunter2", 1);
    ::setenv("LANG", "C.UTF-8", 1);
    SupervisorOptions opt = standin("/nonexistent-repo", 10'000);
    opt.child_program.clear();  // /proc/self/exe: this test binary, whose main() serves as the child
    Supervisor sup(opt);
    Outcome o = sup.run();
    ::unsetenv("GIT_DIR");
    ::unsetenv("COURIER_TEST_SECRET");
    CHECK_MESSAGE(o.kind != OutcomeKind::protocol_fault, o.reason);
    check_confirmed(o);
    const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    CHECK(o.child_argv == std::vector<std::string>{exe, "__delivery-push"});
    REQUIRE_FALSE(o.child_env_keys.empty());
    for (const auto& key : o.child_env_keys) {
      bool allowed = false;
      for (auto a : kChildEnvAllowlist) allowed = allowed || key == a;
      CHECK_MESSAGE(allowed, "the child received a variable outside the allowlist: ", key);
    }
    CHECK(std::find(o.child_env_keys.begin(), o.child_env_keys.end(), "LANG") != o.child_env_keys.end());
  }

  TEST_CASE("C1: no descriptor of the parent leaks into the child; the inherited one arrives at its fixed number") {
    // Deliberately not close-on-exec: only the spawner's own care keeps it out.
    const int leaky = ::open("/dev/null", O_RDONLY);
    REQUIRE(leaky >= 0);
    const int inherit = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    {
      SupervisorOptions opt = standin("deliver", 10'000);
      Supervisor sup(opt);
      Outcome o = sup.run();
      REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
      CHECK(o.child_fds == std::vector<int>{0, 1, 2});
    }
    {
      SupervisorOptions opt = standin("deliver", 10'000);
      opt.inherit_fd = inherit;
      Supervisor sup(opt);
      Outcome o = sup.run();
      REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
      CHECK(o.child_fds == std::vector<int>{0, 1, 2, sys::kInheritedFd});
    }
    ::close(leaky);
    ::close(inherit);
  }

  TEST_CASE("C1: a child-program override must be an absolute path to an existing file") {
    for (std::string bad : {"standin", "./standin", "/nonexistent/program", "/tmp"}) {
      CAPTURE(bad);
      SupervisorOptions opt = standin("deliver", 10'000);
      opt.child_program = bad;
      Supervisor sup(opt);
      Outcome o = sup.run();
      CHECK(o.kind == OutcomeKind::spawn_failed);
      CHECK_FALSE(o.dispatched);
      CHECK_MESSAGE(o.reason.find("child program override") != std::string::npos,
                    "the override was not checked before the spawn: ", o.reason);
    }
  }

  TEST_CASE("spawn_failed: a program that cannot be executed is reported, with nothing left behind") {
    test::TempDir dir;
    const std::string not_exec = dir.path() + "/not-executable";
    { std::ofstream(not_exec) << "data"; }
    SupervisorOptions opt = standin("deliver", 10'000);
    opt.child_program = not_exec;
    Supervisor sup(opt);
    Outcome o = sup.run();
    CHECK(o.kind == OutcomeKind::spawn_failed);
    CHECK(o.reason.find("Permission denied") != std::string::npos);
    CHECK(o.seat() == SeatDisposition::release);
  }

  TEST_CASE("C1: a clone3 the kernel refuses ends the spawn with the kernel's own reason, and no child") {
    // A directory outside the cgroup file system as the child's cgroup:
    // clone3(CLONE_INTO_CGROUP) refuses it with EBADF before any child exists.
    const int not_a_cgroup = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(not_a_cgroup >= 0);
    sys::SpawnSpec spec;
    spec.exec_path = "/bin/true";
    spec.argv = {"/bin/true"};
    spec.cgroup_dir_fd = not_a_cgroup;
    const auto before = test::children_of_self();
    auto child = sys::spawn(spec);
    const auto after = test::children_of_self();
    ::close(not_a_cgroup);
    REQUIRE_FALSE(child.has_value());
    CHECK(child.error().code == Errc::spawn_failed);
    CHECK_MESSAGE(child.error().message == "clone3: " + std::string(std::strerror(EBADF)),
                  "the spawn did not report clone3's own errno: ", child.error().message);
    CHECK(after.size() == before.size());
  }

  TEST_CASE("D3: once the leader is reaped, the kill domain signals nothing") {
    auto out = sys::make_pipe();
    REQUIRE(out);
    sys::SpawnSpec spec;
    spec.exec_path = "/bin/true";
    spec.argv = {"/bin/true"};
    spec.stdout_fd = out->write_end.get();
    auto child = sys::spawn(spec);
    REQUIRE(child);
    KillDomain domain(child->pid, child->pidfd.get(), nullptr);
    auto ready = sys::wait_readable_until({child->pidfd.get()}, mono_now_ns() + 5'000 * kNsPerMs);
    REQUIRE(ready);
    REQUIRE(ready->size() == 1);
    auto status = domain.kill_group_and_reap();
    REQUIRE(status);
    CHECK(status->code == 0);
    CHECK(domain.reaped());
    CHECK_MESSAGE(!domain.kill(StopCause::deadline), "the domain signalled a pid after it was reaped");
  }
}

}  // namespace integration_supervisor
