// held_remote.hpp — a remote whose push is held in its pre-receive hook:
// the hook leaves a mark when it runs (the update commands and the pack have
// reached the server), then waits for one line on a FIFO: "yes" lets the
// push through, anything else refuses it. Whatever a case did, the hook is
// released (refusing) at the end. A test waits on the mark, a fact, never on
// a clock.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <doctest/doctest.h>

#include "support.hpp"

namespace courier::test {

struct HeldRemote {
  std::string fifo;
  std::string mark;
  HeldRemote(const std::string& dir, const std::string& repo_path) : fifo(dir + "/hold"), mark(dir + "/held") {
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string hook = repo_path + "/hooks/pre-receive";
    write_file(hook, "#!/bin/sh\ncat >/dev/null\n: > '" + mark + "'\nread -r go < '" + fifo +
                         "'\n[ \"$go\" = yes ] && exit 0\necho held back >&2\nexit 1\n");
    REQUIRE(::chmod(hook.c_str(), 0755) == 0);
  }
  HeldRemote(const HeldRemote&) = delete;
  HeldRemote& operator=(const HeldRemote&) = delete;
  ~HeldRemote() { release("no"); }
  bool entered() const { return ::access(mark.c_str(), F_OK) == 0; }
  // Answers a hook waiting on the FIFO (none waiting: nothing to do; the
  // FIFO is opened without blocking).
  void release(const std::string& word) const {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    const std::string line = word + "\n";
    (void)!::write(fd, line.data(), line.size());
    ::close(fd);
  }
};

}  // namespace courier::test
