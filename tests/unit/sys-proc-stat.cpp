// sys-proc-stat.cpp — sys::proc_stat (src/sys/process.cpp) on this test
// process's own /proc entry: the fields a stray claim decides by (S3) are
// read after the command name, whatever the name holds, and a pid that
// does not exist has no stat. No process is started.
#include <doctest/doctest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <string>

#include "sys/process.hpp"

// This file's own names (the test programs are compiled a few files at a
// time; a name here must not meet another file's).
namespace unit_sys_proc_stat {

using namespace courier;

namespace {

// Renames this (main) thread, so the process's command name, for one case.
struct NameScope {
  std::array<char, 16> old{};
  explicit NameScope(const char* name) {
    pthread_getname_np(pthread_self(), old.data(), old.size());
    pthread_setname_np(pthread_self(), name);
  }
  ~NameScope() { pthread_setname_np(pthread_self(), old.data()); }
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;
};

}  // namespace

TEST_SUITE("sys-proc-stat") {
  TEST_CASE("S3: a process's stat is read after the last ')' of its name, whatever the name holds") {
    // A name with ')' , '(' and spaces that look like fields.
    NameScope renamed("a) Z 1 (b) 2 3");
    const auto st = sys::proc_stat(getpid());
    REQUIRE(st.has_value());
    CHECK(st->state == 'R');
    CHECK(st->ppid == getppid());
    CHECK(st->pgid == getpgrp());
    CHECK(st->start_ticks > 0);
    // Every process a shell or ctest starts tells its parent by SIGCHLD.
    CHECK(st->exit_signal == SIGCHLD);
  }

  TEST_CASE("S3: a pid that does not exist has no stat") {
    // Above any pid_max Linux allows (2^22).
    CHECK_FALSE(sys::proc_stat(static_cast<pid_t>(1 << 23)).has_value());
  }
}

}  // namespace unit_sys_proc_stat
