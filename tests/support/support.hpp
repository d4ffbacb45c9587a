// support.hpp — test helpers: temporary directories, running a program with
// given stdin and capturing what it said.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace courier::test {

// A directory under $TMPDIR removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
};

enum class Stdin { bytes, tty };

// Runs argv[0] with argv, stdin fed from `input` (or a pseudo-terminal),
// and an environment of `env` (KEY=VALUE entries). Waits for it.
RunResult run(const std::vector<std::string>& argv, const std::string& input = {}, Stdin mode = Stdin::bytes,
              const std::vector<std::string>& env = {"PATH=/usr/bin:/bin"});

// A program of this build, found next to the running test binary, and a
// file of the source tree. Resolved at run time rather than compiled in, so
// the test objects do not depend on where their build directory is: the
// mutation builds (scripts/mutation-control) get them from the compiler
// cache instead of compiling every suite again. The pointers stay valid for
// the life of the process.
const char* built_program(const char* name);
const char* source_path(const char* relative);

// Frames the JSON bodies the way the protocol does (no cap checks: tests use
// this to build deliberately bad streams too).
std::string raw_frame(const std::string& body);

}  // namespace courier::test

namespace courier::test {

// Prints one measured figure and appends it to $COURIER_MEASUREMENTS (set by
// scripts/test) so a passing run still shows what it measured.
void report(const std::string& test, const std::string& figure, double value, const std::string& unit);

// A tmpfs mounted on a new directory `path` (made 0700) for the life of
// this value, unmounted after: a small disk a test can fill, or a fast one
// for many files. Not mounted (`why` says so) without root or when mount
// refuses; a directory that cannot be made is an error (std::runtime_error).
struct Tmpfs {
  Tmpfs(std::string path, const std::string& size);
  ~Tmpfs();
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;
  std::string path;
  bool mounted = false;
  std::string why;
};

// The p-quantile (0..1) of `v`, nearest rank; 0 for none.
double percentile(std::vector<double> v, double p);

// Descriptors open when the test program started (for the leak check).
const std::vector<int>& initial_fds();

// A one-shot latch for synchronising with callbacks on other threads.
// Copies share one state, so a callback can hold a copy beyond the test.
class Latch {
 public:
  Latch();
  void open() const;
  // True if opened within timeout_ms.
  bool wait(long timeout_ms) const;
  bool is_open() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace courier::test

namespace courier::test {

// A program run in the background whose stdout lines are collected by a
// reader thread, so a test can wait for a line it announces.
class LineProcess {
 public:
  explicit LineProcess(const std::vector<std::string>& argv);
  ~LineProcess();  // SIGKILLs it if still running, then reaps
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  // The first line starting with `prefix` (waiting up to timeout_ms), or "".
  std::string wait_line(const std::string& prefix, long timeout_ms);
  std::vector<std::string> lines();
  int pid() const { return pid_; }
  void kill_hard();
  // Waits for exit; returns the exit code (-1 if signalled).
  int wait_exit();

 private:
  struct State;
  std::shared_ptr<State> state_;
  int pid_ = -1;
  bool reaped_ = false;
};

}  // namespace courier::test

namespace courier::test {

// One line of /proc/<pid>/stat (and the exe link), for leak checks.
struct ProcInfo {
  int pid = 0;
  int ppid = 0;
  char state = 0;
  std::string exe;
};
std::vector<ProcInfo> processes();
// Pids whose parent is this process (live or zombie).
std::vector<int> children_of_self();

// The end-of-suite leak check (doctest assertions; defined in
// leak_check.cpp): no child, no process of this build, no host-call
// worker and no descriptor beyond those the program started with (and the
// lane locks retained on purpose).
void leak_check();

}  // namespace courier::test

namespace courier::test {

// Whole-file helpers for tests (binary-safe).
std::string read_file(const std::string& path);
// A TCP port on 127.0.0.1 that was free a moment ago (bound, read, closed),
// for a server a test starts (sshd, PostgreSQL). Throws naming `who`.
int free_loopback_port(const std::string& who);
void write_file(const std::string& path, const std::string& text);

// The environment the CLI's end-to-end tests run git-courier in: a fixed
// PATH and locale, and this run's TMPDIR (so what it leaves is judged by the
// suite's leak check).
std::vector<std::string> cli_env();
// "GIT_COURIER_TEST_ROOT=<the suite's test root>" (tests/support/main.cpp), or ""
// outside the suites: for commands started with a cleared environment.
std::string test_root_env();

}  // namespace courier::test
