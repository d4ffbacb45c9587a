// spawn.hpp — starting a child process: clone3 with a pidfd, in a new
// process group, optionally born inside a cgroup, with a clean slate of
// descriptors, signals and environment (rule C1).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "courier/result.hpp"
#include "sys/fd.hpp"

namespace courier::sys {

// The descriptor number a deliberately inherited fd (the lane lock) has in
// the child.
inline constexpr int kInheritedFd = 3;

struct SpawnSpec {
  std::string exec_path;          // what execve opens: /proc/self/exe, or a test override
  std::vector<std::string> argv;  // exactly what the child sees as argv
  std::vector<std::string> env;   // KEY=VALUE; the whole environment
  int stdin_fd = -1;              // becomes 0
  int stdout_fd = -1;             // becomes 1
  int stderr_fd = -1;             // becomes 2
  int inherit_fd = -1;            // becomes kInheritedFd when >= 0
  int cgroup_dir_fd = -1;         // CLONE_INTO_CGROUP when >= 0: born inside it, no window
  // A delivery child is the leader of a new process group (its kill domain).
  // A helper the delivery child starts (the git pack engine) stays in the
  // caller's group instead, so that one SIGKILL to the domain ends both.
  bool new_process_group = true;
};

struct Spawned {
  pid_t pid = 0;
  ScopedFd pidfd;  // taken atomically by clone3 (CLONE_PIDFD): no pid-reuse window
};

// Starts the child and waits until it has exec'd (or failed to).
// The child: new process group (unless spec.new_process_group is false);
// PR_SET_PDEATHSIG(SIGKILL) tied to the calling
// thread, then a check that its parent is still this process; all signal
// dispositions default and the mask empty; every descriptor but 0/1/2 (and
// kInheritedFd) closed at exec.
// The child's exit signal is 0, not SIGCHLD: a host that ignores SIGCHLD
// cannot make the kernel auto-reap it, and a host's waitpid(-1) cannot steal
// its exit status. Only waitid(P_PIDFD, ..., __WALL) sees it.
// Errors: spawn_failed (with the exec errno), os_error.
Result<Spawned> spawn(const SpawnSpec& spec);

// True while `pid` is a child spawn() started in this process and reap() has
// not yet reaped. A subreaper tells its own children from reparented
// orphans by this, not by the exit signal /proc shows: on Linux 6.18 that
// reads SIGCHLD for a child cloned with exit signal 0. Exact for a pid
// listed after clone3 returned: the registration and clone3 happen under
// the one lock this takes.
bool is_own_spawn(pid_t pid);

// A child whose stdin, stdout and stderr are pipes to the caller.
struct PipedChild {
  Spawned process;
  ScopedFd stdin_w;   // write end of the child's stdin
  ScopedFd stdout_r;  // read end of its stdout
  ScopedFd stderr_r;  // read end of its stderr
};

// spawn() with three fresh pipes as 0, 1 and 2 (spec's own stdin_fd,
// stdout_fd and stderr_fd are replaced). The child's ends are closed here, so
// EOF on stdout_r and stderr_r means the child, and anything it started that
// inherited them, closed them. Errors: as spawn().
Result<PipedChild> spawn_piped(SpawnSpec spec);

// Exit facts of a leader.
struct ExitStatus {
  int code = -1;   // exit code, or -1 when killed by a signal
  int signal = 0;  // the signal that killed it, or 0
};

// waitid(P_PIDFD, WEXITED|WNOWAIT|WNOHANG): has it exited? Leaves it a zombie
// (its pid stays reserved, so its process group id cannot be reused).
// Errors: os_error (wait_failed for the caller).
Result<bool> has_exited(int pidfd);

// True when the unreaped child `pid` (its pidfd) is already dying or dead:
// it has exited, or the kernel has begun its exit (PF_EXITING in
// /proc/PID/stat: a fatal signal is being acted on, its descriptors may
// already be closed). A signal sent now cannot be what ends it. False when
// it cannot be told. Allocates nothing (a deadline killer may call it).
bool is_exiting(pid_t pid, int pidfd);

// waitid(P_PIDFD, WEXITED): reaps. After this the pid may be reused by anyone.
// Errors: os_error.
Result<ExitStatus> reap(int pidfd);

// pidfd_send_signal. Errors: os_error (ESRCH after the process was reaped
// cannot happen through a pidfd: it names exactly one process).
Result<void> pidfd_signal(int pidfd, int sig);

// killpg; ESRCH (no member left) is not an error. Errors: os_error.
Result<void> signal_group(pid_t pgid, int sig);

// pidfd_open for an arbitrary pid (census of descendants). Errors: os_error.
Result<ScopedFd> pidfd_open(pid_t pid);

}  // namespace courier::sys
