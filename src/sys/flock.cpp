// flock.cpp — the lane directory and its lock files (Linux).
#include "sys/flock.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "sys/dir_path.hpp"
#include "sys/io.hpp"

namespace courier::sys {

namespace {

std::string octal_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

bool in_our_groups(gid_t gid) {
  if (gid == ::getegid()) return true;
  const int n = ::getgroups(0, nullptr);
  if (n <= 0) return false;
  std::vector<gid_t> groups(static_cast<std::size_t>(n));
  const int got = ::getgroups(n, groups.data());
  for (int i = 0; i < got; ++i) {
    if (groups[static_cast<std::size_t>(i)] == gid) return true;
  }
  return false;
}

// mkdir -p: every component this call creates gets 0700 (less the umask);
// components that exist are left exactly as they are.
Result<void> create_missing(const std::string& path) {
  for (std::size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/') continue;
    const std::string prefix = path.substr(0, at);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return tl::unexpected(os_error("cannot create lane directory " + prefix, errno));
    }
  }
  return {};
}

tl::unexpected<Error> unsafe(const std::string& path, const std::string& why) {
  return fail(Errc::invalid_argument, "lane directory " + path + " is refused: " + why +
                                          " (use a directory of your own, mode 0700; see docs/operations.md)");
}

}  // namespace

// ---- LaneDir ------------------------------------------------------------------

Result<std::shared_ptr<const LaneDir>> LaneDir::open(const std::string& given) {
  // "link/" would open the link's target despite O_NOFOLLOW.
  auto named = directory_path(given, "lane directory");
  if (!named) return tl::unexpected(named.error());
  const std::string& path = *named;
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  ScopedFd fd(::open(path.c_str(), flags));
  if (!fd && errno == ENOENT) {
    if (auto made = create_missing(path); !made) return tl::unexpected(made.error());
    fd.reset(::open(path.c_str(), flags));
  }
  if (!fd) {
    const int e = errno;
    if (e == ELOOP || e == ENOTDIR) {
      struct stat lst {};
      if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) return unsafe(path, "it is a symbolic link");
      return unsafe(path, "it is not a directory");
    }
    return tl::unexpected(os_error("cannot open lane directory " + path, e));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return tl::unexpected(os_error("fstat lane directory " + path, errno));
  if (!S_ISDIR(st.st_mode)) return unsafe(path, "it is not a directory");
  const uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return unsafe(path, "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
                            std::to_string(me) + ") or root");
  }
  if (st.st_mode & S_IWOTH) {
    return unsafe(path, "it is writable by other users (mode " + octal_mode(st.st_mode) + ")");
  }
  auto dir = std::make_shared<LaneDir>();
  if (st.st_mode & S_IWGRP) {
    if (!in_our_groups(st.st_gid)) {
      return unsafe(path, "it is writable by group " + std::to_string(st.st_gid) +
                              ", which this user is not in (mode " + octal_mode(st.st_mode) + ")");
    }
    dir->shared_ = true;
  }
  dir->path_ = path;
  dir->gid_ = st.st_gid;
  dir->fd_ = std::move(fd);
  return std::shared_ptr<const LaneDir>(std::move(dir));
}

// ---- LockFile -----------------------------------------------------------------

Result<LockFile> LockFile::open(std::shared_ptr<const LaneDir> dir, const std::string& name) {
  LockFile f;
  f.path_ = dir->path() + "/" + name;
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return fail(Errc::invalid_argument, "bad lane lock name '" + name + "'");
  }
  // O_NONBLOCK: a FIFO planted under this name must not block the open.
  const int flags = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  const mode_t mode = dir->shared() ? 0660 : 0600;
  f.fd_.reset(::openat(dir->fd(), name.c_str(), flags | O_CREAT | O_EXCL, mode));
  if (f.fd_) {
    // Created by this call, so its mode is ours to set: in a shared
    // directory the group must be able to open it whatever our umask is.
    if (dir->shared()) (void)::fchmod(f.fd_.get(), mode);
  } else if (errno == EEXIST) {
    f.fd_.reset(::openat(dir->fd(), name.c_str(), flags));
  }
  if (!f.fd_) {
    if (errno == ELOOP) {
      return fail(Errc::invalid_argument, "lane lock " + f.path_ + " is refused: it is a symbolic link");
    }
    return tl::unexpected(os_error("open lane lock " + f.path_, errno));
  }
  struct stat st {};
  if (::fstat(f.fd_.get(), &st) != 0) return tl::unexpected(os_error("fstat lane lock " + f.path_, errno));
  auto refused = [&](const std::string& why) {
    return fail(Errc::invalid_argument, "lane lock " + f.path_ + " is refused: " + why);
  };
  if (!S_ISREG(st.st_mode)) return refused("it is not a regular file");
  if (st.st_nlink != 1) return refused("it has " + std::to_string(st.st_nlink) + " links");
  if (st.st_mode & S_IWOTH) return refused("it is writable by other users (mode " + octal_mode(st.st_mode) + ")");
  if (dir->shared()) {
    if (st.st_gid != dir->gid_ && st.st_uid != ::geteuid()) {
      return refused("it belongs to group " + std::to_string(st.st_gid) + ", not the shared directory's group");
    }
  } else if (st.st_uid != ::geteuid()) {
    return refused("it is owned by uid " + std::to_string(st.st_uid) + ", not by this user");
  }
  f.dir_ = std::move(dir);
  f.name_ = name;
  return f;
}

Result<bool> LockFile::try_lock() const {
  for (;;) {
    if (::flock(fd_.get(), LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return false;
    return tl::unexpected(os_error("flock " + path_, errno));
  }
}

void LockFile::unlock() const {
  ::flock(fd_.get(), LOCK_UN);
  const int poke = ::openat(dir_->fd(), name_.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (poke >= 0) ::close(poke);
}

void LockFile::write_holder(const std::string& text) const {
  if (::ftruncate(fd_.get(), 0) != 0) return;
  const std::size_t n = text.size() < kMaxHolder ? text.size() : kMaxHolder;
  [[maybe_unused]] ssize_t w = ::pwrite(fd_.get(), text.data(), n, 0);
}

std::string LockFile::read_holder() const {
  char buf[kMaxHolder];
  const ssize_t n = ::pread(fd_.get(), buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// ---- CloseWatcher ---------------------------------------------------------------

Result<CloseWatcher> CloseWatcher::create() {
  CloseWatcher w;
  w.fd_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!w.fd_) return tl::unexpected(os_error("inotify_init1", errno));
  return w;
}

Result<int> CloseWatcher::watch(const LockFile& lock) const {
  // The descriptor's magic link names the inode we hold open, whatever has
  // been renamed or planted under the file's path since.
  const std::string self = "/proc/self/fd/" + std::to_string(lock.fd());
  const int wd = ::inotify_add_watch(fd_.get(), self.c_str(), IN_CLOSE_WRITE | IN_CLOSE_NOWRITE);
  if (wd < 0) return tl::unexpected(os_error("inotify_add_watch " + lock.path(), errno));
  return wd;
}

void CloseWatcher::unwatch(int wd) const { ::inotify_rm_watch(fd_.get(), wd); }

void CloseWatcher::drain() const {
  char buf[4096];
  while (::read(fd_.get(), buf, sizeof buf) > 0) {
  }
}

}  // namespace courier::sys
