// unix_socket.hpp — a Unix stream socketpair as the parent/child channel,
// and descriptor passing (SCM_RIGHTS) over it. A warm child, spawned before
// it has a job, receives its lane lock this way together with the job.
#pragma once

#include <cstddef>
#include <utility>

#include "courier/result.hpp"
#include "sys/fd.hpp"

namespace courier::sys {

// socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC). Errors: os_error.
Result<std::pair<ScopedFd, ScopedFd>> make_socketpair();

// True when fd is a socket.
bool is_socket(int fd);

// sendmsg without blocking and without SIGPIPE, attaching `pass` (when >= 0)
// to the first byte. Returns the bytes taken (0: would block). Errors:
// os_error (EPIPE included).
Result<std::size_t> send_with_fd(int sock, const char* data, std::size_t len, int pass);

// Blocking recvmsg of up to len bytes; a descriptor that arrived with them
// is returned close-on-exec in `passed`. 0 bytes: end of file. Errors: os_error.
Result<std::size_t> recv_with_fd(int sock, char* buf, std::size_t len, ScopedFd& passed);

// dup2(from, to) then close(from); `to` is left without close-on-exec.
Result<void> move_fd(ScopedFd from, int to);

}  // namespace courier::sys
