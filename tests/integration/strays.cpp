// strays.cpp — a subreaper's stray claim takes orphans only: never a
// child this process spawned itself, whatever the kernel made of that
// child's exit signal (S2: another delivery's child is not a stray of this
// one).
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "supervisor/strays.hpp"
#include "sys/events.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_strays {

using namespace courier;
using sys::kNsPerMs;
using sys::mono_now_ns;

TEST_SUITE("strays") {
  TEST_CASE(
      "S2: a child this process spawned is never claimed as another delivery's stray, whatever exit signal the "
      "kernel shows for it") {
    // A service runs deliveries side by side: when one delivery's child is
    // reaped, its stray claim lists this process's children while the
    // others' children are alive. They were cloned with exit signal 0, but
    // /proc may show SIGCHLD for them (it does on Linux 6.18), so only the
    // registry of spawns tells them from orphans.
    sys::SpawnSpec spec;
    spec.exec_path = "/bin/sleep";
    spec.argv = {"sleep", "30"};
    auto spawned = sys::spawn(spec);
    REQUIRE_MESSAGE(spawned.has_value(), (spawned ? std::string() : spawned.error().message));
    sys::Spawned child = std::move(*spawned);
    auto st = sys::proc_stat(child.pid);
    REQUIRE(st.has_value());
    MESSAGE("exit signal /proc shows for a child cloned with exit signal 0: " << st->exit_signal);
    CHECK(sys::is_own_spawn(child.pid));

    const auto claim = supervisor::claim_strays(0, mono_now_ns() + 2'000 * kNsPerMs);
    const bool claimed = std::find(claim.reaped.begin(), claim.reaped.end(), child.pid) != claim.reaped.end() ||
                         std::find(claim.alive.begin(), claim.alive.end(), child.pid) != claim.alive.end();
    auto exited = sys::has_exited(child.pidfd.get());
    // Clean up before judging, so that a failing run leaves nothing behind.
    (void)sys::pidfd_signal(child.pidfd.get(), SIGKILL);
    auto status = sys::reap(child.pidfd.get());
    CHECK_MESSAGE(!claimed, "the stray claim took this process's own child " << child.pid);
    CHECK_MESSAGE((exited.has_value() && !*exited), "the child did not survive the stray claim");
    REQUIRE(status.has_value());
    CHECK(status->signal == SIGKILL);
    CHECK_FALSE(sys::is_own_spawn(child.pid));
  }
}

}  // namespace integration_strays
