// unix_listener_linux.cpp — the raw calls behind unix_listener.hpp.
#include "sys/unix_listener.hpp"

#include <sys/socket.h>

#include <cerrno>

#include "sys/io.hpp"

namespace courier::sys {

Result<UnixListener> listen_unix_at(int dir, const std::string& name, const std::string& path) {
  ScopedFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!sock) return tl::unexpected(os_error("socket", errno));
  auto file = place_socket(dir, name, sock.get(), 4, std::nullopt, path);
  if (!file) return tl::unexpected(file.error());
  return UnixListener{std::move(sock), std::move(*file)};
}

Result<std::optional<ScopedFd>> accept_unix(int listener) {
  for (;;) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) return std::optional<ScopedFd>(ScopedFd(fd));
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED) return std::optional<ScopedFd>();
    return tl::unexpected(os_error("accept4", errno));
  }
}

Result<std::int64_t> peer_pid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return tl::unexpected(os_error("getsockopt SO_PEERCRED", errno));
  }
  return static_cast<std::int64_t>(cred.pid);
}

}  // namespace courier::sys
