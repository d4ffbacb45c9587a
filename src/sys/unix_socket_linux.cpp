// unix_socket_linux.cpp — socketpair and SCM_RIGHTS.
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sys/io.hpp"
#include "sys/unix_socket.hpp"

namespace courier::sys {

Result<std::pair<ScopedFd, ScopedFd>> make_socketpair() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return tl::unexpected(os_error("socketpair", errno));
  return std::make_pair(ScopedFd(sv[0]), ScopedFd(sv[1]));
}

bool is_socket(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

Result<std::size_t> send_with_fd(int sock, const char* data, std::size_t len, int pass) {
  iovec iov{const_cast<char*>(data), len};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (pass >= 0) {
    std::memset(control, 0, sizeof control);
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pass, sizeof(int));
  }
  for (;;) {
    const ssize_t n = ::sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::size_t{0};
    return tl::unexpected(os_error("sendmsg", errno));
  }
}

Result<std::size_t> recv_with_fd(int sock, char* buf, std::size_t len, ScopedFd& passed) {
  iovec iov{buf, len};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  for (;;) {
    const ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected(os_error("recvmsg", errno));
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
        passed.reset(fd);
      }
    }
    return static_cast<std::size_t>(n);
  }
}

Result<void> move_fd(ScopedFd from, int to) {
  if (from.get() == to) {
    from.release();
    return {};
  }
  if (::dup2(from.get(), to) < 0) return tl::unexpected(os_error("dup2", errno));
  return {};
}

}  // namespace courier::sys
