// io.cpp — descriptor I/O; the place errno becomes Error.
#include "sys/io.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace courier::sys {

void ScopedFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Error os_error(const std::string& what, int err) { return Error{Errc::os_error, what + ": " + std::strerror(err)}; }

Result<std::size_t> read_some(int fd, char* buf, std::size_t len) {
  for (;;) {
    const ssize_t n = ::read(fd, buf, len);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    return tl::unexpected(os_error("read", errno));
  }
}

Result<ReadResult> read_nonblocking(int fd, char* buf, std::size_t len) {
  for (;;) {
    const ssize_t n = ::read(fd, buf, len);
    if (n > 0) return ReadResult{ReadStatus::data, static_cast<std::size_t>(n)};
    if (n == 0) return ReadResult{ReadStatus::eof, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ReadResult{ReadStatus::would_block, 0};
    // A Unix stream socket says ECONNRESET when its peer's last descriptor
    // closed with bytes we sent still unread (a warm child killed before it
    // read its job): the peer is gone for good, the same fact end-of-file
    // states, and never a reason to doubt that the child stopped (S3).
    if (errno == ECONNRESET) return ReadResult{ReadStatus::eof, 0};
    return tl::unexpected(os_error("read", errno));
  }
}

Result<void> write_all(int fd, const char* buf, std::size_t len) {
  std::size_t done = 0;
  while (done < len) {
    const ssize_t n = ::write(fd, buf + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      // A full disk is told apart: the caller can say how much room it needed.
      if (errno == ENOSPC || errno == EDQUOT) return fail(Errc::disk_full, os_error("write", errno).message);
      return tl::unexpected(os_error("write", errno));
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Result<std::size_t> write_nonblocking(int fd, const char* buf, std::size_t len) {
  for (;;) {
    const ssize_t n = ::write(fd, buf, len);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::size_t{0};
    return tl::unexpected(os_error("write", errno));
  }
}

Result<void> set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return tl::unexpected(os_error("fcntl(O_NONBLOCK)", errno));
  }
  return {};
}

Result<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) < 0) return tl::unexpected(os_error("pipe2", errno));
  return Pipe{ScopedFd(fds[0]), ScopedFd(fds[1])};
}

Result<ScopedFd> dup_at_least(int fd, int min_fd) {
  const int d = ::fcntl(fd, F_DUPFD_CLOEXEC, min_fd);
  if (d < 0) return tl::unexpected(os_error("fcntl(F_DUPFD_CLOEXEC)", errno));
  return ScopedFd(d);
}

std::vector<int> open_fds() {
  std::vector<int> out;
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return out;
  const int self = ::dirfd(d);
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const int fd = std::atoi(e->d_name);
    if (fd != self) out.push_back(fd);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace courier::sys
