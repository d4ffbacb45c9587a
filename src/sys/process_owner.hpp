// process_owner.hpp — what a live process is, as far as proving it one of
// ours before signalling it goes: its owner, its executable, its process
// group and its cgroup. Recovery (J3) kills only a process it can prove is
// a delivery child of this user: a pid, start time and boot id read from a
// shared journal name a process, not whose it is.
#pragma once

#include <sys/types.h>

#include <string>

#include "courier/result.hpp"

namespace courier::sys {

struct ProcessOwner {
  uid_t uid = 0;   // real
  uid_t euid = 0;  // effective
  // The executable, as the file /proc/<pid>/exe names (device and inode:
  // the same file whatever path it was started by).
  dev_t exe_dev = 0;
  ino_t exe_ino = 0;
  pid_t pgid = 0;
  std::string cgroup;  // the cgroup v2 path, "/..." as /proc/<pid>/cgroup's "0::" line says; "" without one
};

// The facts of `pid`, read from /proc. Errors: os_error (gone, or not
// readable by this user: another user's executable stays hidden).
Result<ProcessOwner> process_owner(pid_t pid);

// The same for this process.
Result<ProcessOwner> self_owner();

}  // namespace courier::sys
