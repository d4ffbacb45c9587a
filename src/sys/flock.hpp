// flock.hpp — cross-process lane locks: an flock(2) on a file in the lane
// directory, and an inotify watch that says when a holder may have let go.
//
// flock locks belong to the open file description, so a child that inherits
// the descriptor keeps the lock held even after the parent is gone: the
// kernel frees the lane only when both have closed it (rule S6).
#pragma once

#include <string>

#include "result.hpp"
#include "sys/fd.hpp"

namespace courier::sys {

class LockFile {
 public:
  // Opens (creating, 0600) the lock file, close-on-exec. Errors: os_error.
  static Result<LockFile> open(const std::string& path);

  // flock(LOCK_EX | LOCK_NB). True when this description now holds it.
  // Errors: os_error (anything but EWOULDBLOCK).
  Result<bool> try_lock() const;

  // flock(LOCK_UN), then opens and closes the file once so that waiters
  // watching for closes (CloseWatcher) retry now.
  void unlock() const;

  // Holder description (pid, delivery) written by the holder, read by waiters.
  void write_holder(const std::string& text) const;
  std::string read_holder() const;

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  ScopedFd take_fd() { return std::move(fd_); }

 private:
  std::string path_;
  ScopedFd fd_;
};

// inotify on lock files: any close of the file (a holder exiting, a parent
// closing its copy) makes the descriptor readable, so waiters retry on an
// event instead of a clock.
class CloseWatcher {
 public:
  static Result<CloseWatcher> create();
  // Errors: os_error.
  Result<int> watch(const std::string& path) const;
  void unwatch(int wd) const;
  void drain() const;
  int fd() const { return fd_.get(); }

 private:
  ScopedFd fd_;
};

// mkdir -p with mode 0700 for the final component. Errors: os_error.
Result<void> make_private_dir(const std::string& path);

}  // namespace courier::sys
