// flock.hpp — the lane directory and its lock files: a verified directory,
// an flock(2) on a file opened relative to it, and an inotify watch that
// says when a holder may have let go.
//
// flock locks belong to the open file description, so a child that inherits
// the descriptor keeps the lock held even after the parent is gone: the
// kernel frees the lane only when both have closed it (rule S6).
//
// The directory may have been prepared by someone else (another local user,
// a careless --lane-dir /tmp), so nothing here changes the mode of anything
// it did not create, follows a symlink, or opens a file other than a plain
// regular file (rule H1, docs/operations.md "The lane directory").
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "courier/result.hpp"
#include "sys/fd.hpp"
// default_lane_dir(): where the lanes are when none is given (rule S1).
#include "sys/state_paths.hpp"

namespace courier::sys {

// A lane directory whose identity and permissions were checked once, held
// open so that every lock file is opened relative to that very directory.
class LaneDir {
 public:
  // Opens `path`, creating it (and missing parents) with mode 0700 if it
  // does not exist; only what this call creates gets a mode. An existing
  // directory is accepted only if it is a real directory (not a symlink),
  // owned by the effective uid or by root, not writable by others, and, if
  // group-writable, its group is one of ours (a shared lane directory).
  // Errors: invalid_argument (the path is unsafe: the message names it and
  // what is wrong), os_error (cannot create or open it).
  static Result<std::shared_ptr<const LaneDir>> open(const std::string& path);

  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }
  // Group-writable directory shared by several users (lock files 0660).
  bool shared() const { return shared_; }

 private:
  std::string path_;
  ScopedFd fd_;
  bool shared_ = false;
  gid_t gid_ = 0;
  friend class LockFile;
};

class LockFile {
 public:
  // Opens (creating 0600, or 0660 in a shared directory) the lock file
  // `name` relative to the verified directory: O_NOFOLLOW, O_NONBLOCK, never
  // truncated at open. Refused unless it is a regular file with one link,
  // owned by the effective uid (in a shared directory: by a user of the
  // directory's group, not writable by others).
  // Errors: invalid_argument (not a lock file we can trust), os_error.
  static Result<LockFile> open(std::shared_ptr<const LaneDir> dir, const std::string& name);

  // flock(LOCK_EX | LOCK_NB). True when this description now holds it.
  // Errors: os_error (anything but EWOULDBLOCK).
  Result<bool> try_lock() const;

  // flock(LOCK_UN), then opens and closes the file once so that waiters
  // watching for closes (CloseWatcher) retry now.
  void unlock() const;

  // Holder description (pid, delivery) written by the holder, read by
  // waiters. What is read is at most kMaxHolder bytes, as found: another
  // user may have written it, so callers print it escaped.
  static constexpr std::size_t kMaxHolder = 256;
  void write_holder(const std::string& text) const;
  std::string read_holder() const;

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  ScopedFd take_fd() { return std::move(fd_); }

 private:
  std::shared_ptr<const LaneDir> dir_;
  std::string name_;
  std::string path_;
  ScopedFd fd_;
};

// inotify on lock files: any close of the file (a holder exiting, a parent
// closing its copy) makes the descriptor readable, so waiters retry on an
// event instead of a clock.
class CloseWatcher {
 public:
  static Result<CloseWatcher> create();
  // Watches the very file `lock` has open (not whatever its path names now).
  // Errors: os_error.
  Result<int> watch(const LockFile& lock) const;
  void unwatch(int wd) const;
  void drain() const;
  int fd() const { return fd_.get(); }

 private:
  ScopedFd fd_;
};

}  // namespace courier::sys
