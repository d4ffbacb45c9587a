// main.cpp — the doctest main of the integration binary (courier-tests): the
// suites that spawn real processes and start servers.
//
// Like a host program, it first lets its own executable serve as the
// delivery child, so supervisor tests that spawn /proc/self/exe run the real
// child code. After a whole suite has run (ctest's --test-suite=NAME), it
// runs the leak check (tests/support/leak_check.cpp) in the same process, last.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "courier/courier.hpp"
#include "sys/state_paths.hpp"
#include "failed_checks.hpp"

int courier::test::failed_checks() {
  // doctest counts a case's failures in this atomic, from every thread.
  return doctest::detail::g_cs ? doctest::detail::g_cs->numAssertsFailedCurrentTest_atomic : 0;
}

namespace {

bool whole_suite_run(int argc, char** argv) {
  bool suite = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.rfind("--test-suite=", 0) == 0 || arg.rfind("-ts=", 0) == 0) suite = true;
    if (arg.rfind("--test-case=", 0) == 0 || arg.rfind("-tc=", 0) == 0 || arg.rfind("--list", 0) == 0 ||
        arg == "--help" || arg == "-h") {
      return false;
    }
  }
  return suite;
}

// Scratch directories the product kept on purpose (an unconfirmed stop
// keeps its child's files, docs/operations.md): the suites make such stops
// deliberately and kill what they left running, so what the product kept
// for them is theirs to remove — this process's, and those of the CLIs it
// ran, which are gone.
void remove_kept_scratch() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = std::string(tmp && *tmp ? tmp : "/tmp") + "/git-courier-" + std::to_string(::geteuid());
  const std::string prefix = "git-courier-scratch-";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::atol(name.c_str() + prefix.size());
    if (pid == static_cast<long>(::getpid()) || (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0)) {
      std::filesystem::remove_all(e.path(), ec);
    }
  }
  std::filesystem::remove(base, ec);  // the scratch parent, when nothing else is in it
}

}  // namespace

int main(int argc, char** argv) {
  if (auto code = courier::run_child_if_requested(argc, argv)) return *code;
  // Every git-courier the suites run (and every Executor they make) takes
  // its default journal, lanes and socket under this test root, never the
  // host's /run/git-courier, /var/lib/git-courier or home directory: the run
  // leaves no trace and meets no other run. The product honours only a real
  // path (sys/state_paths.hpp), so TMPDIR's symbolic links are resolved.
  const char* tmp = std::getenv("TMPDIR");
  std::string made = std::string(tmp && *tmp ? tmp : "/tmp") + "/courier-tests-state-XXXXXX";
  if (::mkdtemp(made.data()) == nullptr) return 99;
  std::error_code real_ec;
  const std::string state = std::filesystem::canonical(made, real_ec).string();
  if (real_ec) return 99;
  ::setenv(courier::sys::kTestRootVariable, state.c_str(), 1);
  struct RemoveState {
    std::string dir;
    ~RemoveState() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      remove_kept_scratch();
    }
  } remove_state{state};
  doctest::Context context(argc, argv);
  int rc = context.run();
  if (context.shouldExit() || !whole_suite_run(argc, argv)) return rc;
  doctest::Context leak;
  leak.setOption("no-intro", true);
  leak.setOption("no-skip", true);
  leak.setOption("test-case", "leak check: this run leaves*");
  const int leak_rc = leak.run();
  return rc != 0 ? rc : leak_rc;
}
