// raw_http.hpp — HTTP/1.1 requests written by hand on a socket of the
// test's own: the service's API as a client in any language sees it, with
// no curl process inside a measurement, and connections the test can hold
// open, idle, by the thousand. Every read is bounded.
#pragma once

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sys/clock.hpp"

namespace courier::test {

// A connection, or -1 when the service did not take it within 2 s (a full
// backlog: a Unix socket's connect waits for the server to accept).
inline int connect_to(const sockaddr* a, socklen_t len, int family) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  const timeval wait{2, 0};
  REQUIRE(::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait) == 0);
  if (::connect(fd, a, len) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline int connect_unix(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof a.sun_path);
  std::copy(path.begin(), path.end(), a.sun_path);
  return connect_to(reinterpret_cast<sockaddr*>(&a), sizeof a, AF_UNIX);
}

inline int connect_tcp(std::int64_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return connect_to(reinterpret_cast<sockaddr*>(&a), sizeof a, AF_INET);
}

inline void send_all(int fd, const std::string& text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = ::send(fd, text.data() + at, text.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return;
    at += static_cast<std::size_t>(n);
  }
}

// Waits (until `until`) for fd to be readable: never blocks past it.
inline bool readable_by(int fd, sys::MonoNs until) {
  for (;;) {
    const auto left_ms = (until - sys::mono_now_ns()) / sys::kNsPerMs;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::max<sys::MonoNs>(left_ms, 0)));
    if (r > 0) return true;
    if (r == 0 || errno != EINTR) return false;
  }
}

// The request's text: Connection: close, a bearer token when given.
inline std::string request_text(const std::string& method, const std::string& path, const std::string& bearer = {},
                                const std::string& body = {}) {
  std::string r = method + " " + path + " HTTP/1.1\r\nHost: courier\r\nConnection: close\r\n";
  if (!bearer.empty()) r += "Authorization: Bearer " + bearer + "\r\n";
  if (!body.empty()) r += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  return r + "\r\n" + body;
}

// One request on a connection (then closed), read to its end within
// `timeout_ms`: the answer's text (empty: none in time, or no connection).
inline std::string request_on(int fd, const std::string& text, long timeout_ms = 5'000) {
  if (fd < 0) return {};
  send_all(fd, text);
  const auto until = sys::mono_now_ns() + timeout_ms * sys::kNsPerMs;
  std::string in;
  char buf[8192];
  while (readable_by(fd, until)) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    in.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return in;
}

inline int status_of(const std::string& answer) {
  return answer.size() > 12 ? std::atoi(answer.substr(9, 3).c_str()) : 0;
}

inline std::string body_of_answer(const std::string& answer) {
  const auto split = answer.find("\r\n\r\n");
  return split == std::string::npos ? std::string() : answer.substr(split + 4);
}

}  // namespace courier::test
