// flock.cpp — lane lock files and close notifications (Linux).
#include "sys/flock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "sys/io.hpp"

namespace courier::sys {

Result<LockFile> LockFile::open(const std::string& path) {
  LockFile f;
  f.path_ = path;
  f.fd_.reset(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!f.fd_) return tl::unexpected(os_error("open lane lock " + path, errno));
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
  const int poke = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (poke >= 0) ::close(poke);
}

void LockFile::write_holder(const std::string& text) const {
  if (::ftruncate(fd_.get(), 0) != 0) return;
  [[maybe_unused]] ssize_t n = ::pwrite(fd_.get(), text.data(), text.size(), 0);
}

std::string LockFile::read_holder() const {
  char buf[512];
  const ssize_t n = ::pread(fd_.get(), buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

Result<CloseWatcher> CloseWatcher::create() {
  CloseWatcher w;
  w.fd_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!w.fd_) return tl::unexpected(os_error("inotify_init1", errno));
  return w;
}

Result<int> CloseWatcher::watch(const std::string& path) const {
  const int wd = ::inotify_add_watch(fd_.get(), path.c_str(), IN_CLOSE_WRITE | IN_CLOSE_NOWRITE);
  if (wd < 0) return tl::unexpected(os_error("inotify_add_watch " + path, errno));
  return wd;
}

void CloseWatcher::unwatch(int wd) const { ::inotify_rm_watch(fd_.get(), wd); }

void CloseWatcher::drain() const {
  char buf[4096];
  while (::read(fd_.get(), buf, sizeof buf) > 0) {
  }
}

Result<void> make_private_dir(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return fail(Errc::os_error, "cannot create lane directory " + path + ": " + ec.message());
  ::chmod(path.c_str(), 0700);
  return {};
}

}  // namespace courier::sys
