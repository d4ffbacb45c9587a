// unit-auth-zz-leak.cpp — the auth suite ends by proving it left nothing
// behind: no credential helper or fixture server still a child of ours, no
// parked host-callback worker, no descriptor. Its name sorts it last among
// the auth files (doctest runs files in name order).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "courier.hpp"
#include "supervisor/host_calls.hpp"
#include "support.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"

using namespace courier;

TEST_SUITE("auth") {
  TEST_CASE("leak check: the auth suite leaves no child, no worker and no descriptor behind") {
    CHECK_MESSAGE(supervisor::HostCalls::wait_idle(5'000), "a host-callback worker is still alive");
    const pid_t self = sys::self_pid();
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream in(e.path() / "stat");
      std::string line;
      if (!std::getline(in, line)) continue;
      const auto close = line.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(line.substr(close + 2));
      char state = 0;
      long ppid = 0;
      rest >> state >> ppid;
      CHECK_MESSAGE(ppid != self, "a child of the test process is left: pid ", name, " state ", state);
    }
    std::vector<int> fds = sys::open_fds();
    for (int keep : retained_lane_lock_fds()) fds.erase(std::remove(fds.begin(), fds.end(), keep), fds.end());
    CHECK(fds == test::initial_fds());
  }
}
