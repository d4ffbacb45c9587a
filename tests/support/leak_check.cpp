// leak_check.cpp — the end-of-run leak check, in-process. tests/support/main.cpp
// runs it after the selected tests whenever a whole suite ran (ctest runs
// one suite per process), so each suite proves it left nothing behind:
// no child, no process of this build, no host-callback worker, no
// descriptor. It is not a file-name trick: main() runs it explicitly, last.
#include <doctest/doctest.h>
#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <algorithm>

#include "courier/courier.hpp"
#include "supervisor/host_calls.hpp"
#include "support.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"

using namespace courier;

namespace courier::test {

void leak_check() {
  // Host-callback workers parked by tests must have been released and gone.
  CHECK_MESSAGE(supervisor::HostCalls::wait_idle(5'000), "a host-callback worker is still alive");
  const pid_t self = sys::self_pid();
  const std::string standin = std::filesystem::canonical(COURIER_STANDIN).string();
  const std::string courier = std::filesystem::canonical(COURIER_BINARY).string();
  const std::string tests = std::filesystem::read_symlink("/proc/self/exe").string();
  // ctest runs the suites side by side, each in a session of its own
  // (CMakeLists.txt runs them under setsid): a process of this build in
  // another session is another suite's, still at work. scripts/leak-check,
  // run after every suite, finds one left anywhere (a setsid escapee too).
  const pid_t session = ::getsid(0);
  for (const auto& p : test::processes()) {
    CHECK_MESSAGE(p.ppid != self, "a child of the test process is left (pid ", p.pid, ", state ", p.state, ")");
    const bool ours =
        (p.exe == standin || p.exe == courier || (p.exe == tests && p.pid != self)) && ::getsid(p.pid) == session;
    CHECK_MESSAGE(!(ours && p.state != 'Z'), "a process of this build is still running: pid ", p.pid, " ", p.exe);
  }
  // Lane locks of poisoned lanes are retained on purpose (S3).
  std::vector<int> fds = sys::open_fds();
  for (int keep : retained_lane_lock_fds()) fds.erase(std::remove(fds.begin(), fds.end(), keep), fds.end());
  CHECK(fds == test::initial_fds());
}

}  // namespace courier::test

// Skipped in normal runs; main() runs it with skips ignored, by name.
TEST_CASE("leak check: this run leaves no child, no process, no worker and no descriptor behind" * doctest::skip()) {
  test::leak_check();
}
