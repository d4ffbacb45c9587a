// unix_listener.hpp — a listening Unix socket in a directory of our own
// (the parent's SSH agent for one delivery), and its connections, accepted
// without blocking.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "courier/result.hpp"
#include "sys/fd.hpp"
#include "sys/socket_file.hpp"

namespace courier::sys {

struct UnixListener {
  ScopedFd fd;  // listening, non-blocking, close-on-exec
  // The socket's file, removed when this is destroyed. Declared last:
  // destroyed first.
  BoundSocketFile file;
};

// Listens on `name` in the directory `dir` (a descriptor; `path` is the
// socket's whole path, for messages), which must be free. Errors:
// invalid_argument (the name is taken), os_error.
Result<UnixListener> listen_unix_at(int dir, const std::string& name, const std::string& path);

// accept4 (non-blocking, close-on-exec): the next waiting connection, or
// nullopt when none waits. Errors: os_error.
Result<std::optional<ScopedFd>> accept_unix(int listener);

// The pid the kernel recorded for the peer of a connected Unix socket
// (SO_PEERCRED). Errors: os_error.
Result<std::int64_t> peer_pid(int fd);

}  // namespace courier::sys
