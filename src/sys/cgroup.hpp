// cgroup.hpp — a cgroup v2 kill domain for one child: created empty, the
// child born into it (CLONE_INTO_CGROUP), killed whole with cgroup.kill,
// observed empty through cgroup.events, removed afterwards.
#pragma once

#include <string>
#include <string_view>

#include "courier/result.hpp"
#include "sys/fd.hpp"

namespace courier::sys {

// The name every delivery cgroup starts with: `git-courier-<pid>-<n>`,
// made directly under the parent's own cgroup.
inline constexpr std::string_view kDeliveryCgroupPrefix = "git-courier-";

class Cgroup {
 public:
  // Where new cgroups can be made: the writable cgroup2 directory this
  // process lives in. Errors: os_error, with the reason it is unusable (no
  // cgroup2 mount, not writable, no cgroup.kill on this kernel).
  static Result<std::string> find_parent();

  // Removes empty cgroups named `<prefix><pid>-<n>` under parent whose pid
  // is no longer running: what a host killed with SIGKILL left behind.
  // Returns how many were removed.
  static int sweep_stale(const std::string& parent, const std::string& prefix);

  // Creates `parent/name`. Errors: os_error.
  static Result<Cgroup> create(const std::string& parent, const std::string& name);

  Cgroup() = default;
  Cgroup(Cgroup&&) = default;
  Cgroup& operator=(Cgroup&&) = default;
  ~Cgroup();  // removes the directory if still there and empty

  int dir_fd() const { return dir_.get(); }
  // cgroup.events: readable with EPOLLPRI whenever "populated" changes.
  int events_fd() const { return events_.get(); }
  const std::string& path() const { return path_; }

  // Writes 1 to cgroup.kill: SIGKILL to every process in it, atomically with
  // respect to forks. Errors: os_error.
  Result<void> kill() const;
  // Reads "populated" from cgroup.events. Errors: os_error.
  Result<bool> populated() const;
  // rmdir. Errors: os_error (EBUSY while populated).
  Result<void> remove();

 private:
  std::string path_;
  ScopedFd dir_;
  ScopedFd events_;
  ScopedFd kill_;  // cgroup.kill, opened up front so a kill needs no open()
};

}  // namespace courier::sys
