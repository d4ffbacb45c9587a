// process.hpp — small process facts and settings (the raw syscalls behind
// them live in process.cpp, so that code outside src/sys stays portable).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "courier/result.hpp"

namespace courier::sys {

// prctl(PR_SET_PDEATHSIG, SIGKILL): this process dies when the thread that
// spawned it exits. Errors: os_error.
Result<void> set_parent_death_kill();

pid_t self_pid();
pid_t parent_pid();

// SIGKILL to the caller's own process group, the caller included (the
// delivery child's own lease timer, L2). On success the caller does not
// live on. Errors: os_error (the signal could not be sent).
Result<void> kill_own_process_group();
bool is_tty(int fd);

// chdir(path): `git-courier -C DIR ...` works in DIR, as `git -C DIR` does.
// Errors: os_error naming the path and why.
Result<void> change_directory(const std::string& path);

// kill(pid, 0) == 0 or EPERM: the pid names a process (possibly a zombie).
bool pid_exists(pid_t pid);

// Single-letter state from /proc/<pid>/stat ('R', 'S', 'Z', ...), or 0 when
// the process is gone.
char proc_state(pid_t pid);

// Pids whose process group is pgid, from /proc/*/stat (a scan of every
// process: about a millisecond on a quiet machine).
std::vector<pid_t> pids_in_group(pid_t pgid);

// Whether `path` is a regular file this process may execute (stat and
// access(X_OK); symbolic links followed).
bool is_executable_file(const std::string& path);

// The first executable regular file called `name` in the directories of
// `path` (a PATH value; absent: this process's PATH, or /usr/bin:/bin), as
// an absolute path. Relative entries are not searched. Errors:
// invalid_argument (none found).
Result<std::string> find_on_path(const std::string& name, const std::optional<std::string>& path = std::nullopt);

// kill(-pgid, 0) == 0 or EPERM: some process (possibly a zombie) is still in
// process group pgid. One system call; false means the group is empty.
bool group_has_members(pid_t pgid);

// This machine's host name (gethostname), or "localhost" if it has none.
std::string host_name();

// Names of the variables in this process's environment.
std::vector<std::string> environment_keys();
// This process's whole environment, as KEY=VALUE entries.
std::vector<std::string> environment();

// prctl(PR_SET_CHILD_SUBREAPER): while on, an orphaned descendant of this
// process (its parent died) is reparented to this process instead of init,
// whatever session, process group or cgroup it moved to. Process-wide.
// Errors: os_error.
Result<void> set_child_subreaper(bool on);

// prctl(PR_GET_CHILD_SUBREAPER); false when it cannot be read.
bool is_child_subreaper();

// A few fields of /proc/<pid>/stat.
struct ProcStat {
  pid_t ppid = 0;
  pid_t pgid = 0;
  char state = 0;                      // 'R', 'S', 'Z', ...
  unsigned long long start_ticks = 0;  // start time, clock ticks after boot
  int exit_signal = 0;                 // what its parent is sent when it dies
};

// The stat of pid, or nullopt when it is gone (or unreadable).
std::optional<ProcStat> proc_stat(pid_t pid);

// Pids whose parent is this process (zombies included), from /proc/*/stat.
std::vector<pid_t> children_of_self();

// waitpid(-1, WNOHANG): true if any child of this process has exited and is
// waiting to be reaped (a zombie we own). Does not reap: uses WNOWAIT.
bool has_unreaped_child();

}  // namespace courier::sys

namespace courier::sys {

// Blocks SIGPIPE for the calling thread while alive, so a write to a pipe
// whose reader is gone returns EPIPE instead of killing the host process;
// on destruction it consumes a SIGPIPE that this scope left pending and
// restores the previous mask. The host's own SIGPIPE disposition is untouched.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock();
  ~ScopedSigpipeBlock();
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  bool was_blocked_ = false;
  bool was_pending_ = false;
};

}  // namespace courier::sys
