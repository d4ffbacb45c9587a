// service_socket.hpp — the listening sockets of `git-courier serve` and who
// is at the other end of a connection: the Unix socket in a directory only
// the service's user and group may enter, taken under a single-instance
// lock; a loopback TCP socket; a peer's credentials (SO_PEERCRED,
// SO_PEERGROUPS).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "courier/result.hpp"
#include "sys/fd.hpp"
#include "sys/socket_file.hpp"

namespace courier::sys {

struct ServiceSocket {
  std::string path;       // the socket
  std::string lock_path;  // the single-instance lock beside it (never unlinked)
  ScopedFd dir;           // the verified directory
  ScopedFd lock;          // holds flock(LOCK_EX) for the life of the service
  ScopedFd listener;      // listening, non-blocking, close-on-exec
  // The socket's file, removed when this is destroyed (a failed start's
  // return included) and while the lock is still held: declared last, so
  // destroyed first.
  BoundSocketFile file;
};

// Binds the Unix socket `path`: its directory is created 0750 when missing
// (missing parents 0700); an existing one must be a real directory owned by
// the effective uid, writable by nobody else, and is never chmodded (H1).
// Then the lock file "<socket name>.lock" in that directory (created 0600,
// no symlink followed) is locked with flock(LOCK_EX|LOCK_NB) and this pid
// written into it. Only then is the name looked at: a socket of this user
// that nobody answers on (a service killed) is stale and replaced; anything
// else there is refused (socket_file.hpp). The new socket is bound through
// the verified directory's descriptor under a temporary name, made 0660,
// listened on, and swapped into place. Errors: invalid_argument (another
// service holds the lock, or answers on the socket: the message names its
// pid; an unsafe directory, a path too long, something else at the path),
// os_error.
Result<ServiceSocket> bind_service_socket(const std::string& path);

// Removes the socket a ServiceSocket bound (at exit, lock still held), if
// the name is still that socket. The lock file stays: a lock file is never
// unlinked while a process may hold it.
void remove_service_socket(ServiceSocket& s);

// A TCP socket listening on 127.0.0.0/8 only: `host` must be a dotted IPv4
// loopback address. Errors: invalid_argument (not loopback), os_error.
Result<ScopedFd> listen_loopback_tcp(const std::string& host, std::uint16_t port);

// The port a bound TCP socket listens on (the kernel's choice for port 0).
// Errors: os_error.
Result<std::uint16_t> local_port(int fd);

struct PeerCredentials {
  std::int64_t pid = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;              // primary group
  std::vector<std::uint32_t> groups;  // supplementary groups (SO_PEERGROUPS)
};

// The credentials the kernel recorded for the peer of a connected Unix
// socket. Errors: os_error (not a Unix socket, or the call failed).
Result<PeerCredentials> peer_credentials(int fd);

// This process's effective uid.
std::uint32_t effective_uid();

}  // namespace courier::sys
