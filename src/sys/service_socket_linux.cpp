// service_socket_linux.cpp — the raw calls behind service_socket.hpp.
#include "sys/service_socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sys/dir_path.hpp"
#include "sys/io.hpp"
#include "sys/socket_file.hpp"

namespace courier::sys {

namespace {
// A burst of connections (thousands of clients at once) waits in the
// kernel until the server accepts it rather than being refused.
constexpr int kBacklog = 1024;

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// mkdir -p: the last component 0750, missing parents 0700; what exists is
// left as it is. Returns whether the last component was created here.
Result<bool> create_missing(const std::string& path) {
  bool created = false;
  for (std::size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/') continue;
    const std::string prefix = path.substr(0, at);
    if (prefix.back() == '/') continue;
    const bool last = at == path.size();
    if (::mkdir(prefix.c_str(), last ? 0750 : 0700) == 0) {
      created = last;
    } else if (errno != EEXIST) {
      return tl::unexpected(os_error("cannot create directory " + prefix, errno));
    }
  }
  return created;
}

Result<ScopedFd> open_socket_dir(const std::string& dir) {
  auto created = create_missing(dir);
  if (!created) return tl::unexpected(created.error());
  const auto refuse = [&](const std::string& why) {
    return fail(Errc::invalid_argument, "the socket's directory " + dir + " is refused: " + why);
  };
  ScopedFd fd(::open(dir.c_str(), kDirFlags));
  if (!fd) {
    const int e = errno;
    struct stat lst {};
    if ((e == ELOOP || e == ENOTDIR) && ::lstat(dir.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
      return refuse("it is a symbolic link");
    }
    return tl::unexpected(os_error("cannot open the socket's directory " + dir, e));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return tl::unexpected(os_error("fstat " + dir, errno));
  if (st.st_uid != ::geteuid()) return refuse("it is not owned by this user");
  // Made here: exactly 0750 whatever the umask (ours: we created it).
  if (*created && (st.st_mode & 07777) != 0750 && ::fchmod(fd.get(), 0750) != 0) {
    return tl::unexpected(os_error("chmod 0750 " + dir, errno));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return refuse("it is writable by group or others");
  return fd;
}

Result<ScopedFd> take_lock(int dir, const std::string& name, const std::string& lock_path) {
  ScopedFd fd(::openat(dir, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return tl::unexpected(os_error("cannot open the lock file " + lock_path, errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return tl::unexpected(os_error("fstat " + lock_path, errno));
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    return fail(Errc::invalid_argument, "the lock file " + lock_path + " is not a regular file of this user");
  }
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return tl::unexpected(os_error("flock " + lock_path, errno));
    char buf[32] = {};
    const ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
    std::string holder = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("?");
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    for (char& c : holder) {
      if (c < '0' || c > '9') c = '?';
    }
    return fail(Errc::invalid_argument, "another git-courier serve (pid " + holder + ") holds " + lock_path);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd.get(), 0) != 0 || ::pwrite(fd.get(), pid.data(), pid.size(), 0) < 0) {
    return tl::unexpected(os_error("cannot write " + lock_path, errno));
  }
  return fd;
}

}  // namespace

Result<ServiceSocket> bind_service_socket(const std::string& path) {
  ServiceSocket s;
  s.path = path;
  const auto slash = path.rfind('/');
  if (path.empty() || path[0] != '/' || slash == std::string::npos || slash + 1 == path.size()) {
    return fail(Errc::invalid_argument, "the socket path must be absolute: " + path);
  }
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) {
    return fail(Errc::invalid_argument,
                "the socket path is longer than " + std::to_string(sizeof addr.sun_path - 1) + " bytes: " + path);
  }
  // "link//serve.sock": the directory is "link/", which would open the
  // link's target despite O_NOFOLLOW.
  auto dir = directory_path(slash == 0 ? "/" : path.substr(0, slash), "the socket's directory");
  if (!dir) return tl::unexpected(dir.error());
  const std::string name = path.substr(slash + 1);
  s.lock_path = path + ".lock";
  auto dfd = open_socket_dir(*dir);
  if (!dfd) return tl::unexpected(dfd.error());
  s.dir = std::move(*dfd);
  auto lock = take_lock(s.dir.get(), name + ".lock", s.lock_path);
  if (!lock) return tl::unexpected(lock.error());
  s.lock = std::move(*lock);
  // Under the lock: a socket left at the name is stale only if nobody
  // answers on it (a service SIGKILLed; one started without this lock, or
  // with its lock file replaced, still answers and is refused).
  auto stale = find_stale_socket(s.dir.get(), name, path);
  if (!stale) return tl::unexpected(stale.error());
  ScopedFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!sock) return tl::unexpected(os_error("socket", errno));
  auto file = place_socket(s.dir.get(), name, sock.get(), kBacklog, *stale, path);
  if (!file) return tl::unexpected(file.error());
  s.file = std::move(*file);
  s.listener = std::move(sock);
  return s;
}

void remove_service_socket(ServiceSocket& s) { s.file.remove(); }

Result<ScopedFd> listen_loopback_tcp(const std::string& host, std::uint16_t port) {
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) != 1 || (ntohl(a.s_addr) >> 24) != 127) {
    return fail(Errc::invalid_argument, "--listen accepts a loopback IPv4 address only (127.0.0.1), not " + host);
  }
  ScopedFd sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!sock) return tl::unexpected(os_error("socket", errno));
  int one = 1;
  (void)::setsockopt(sock.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr = a;
  if (::bind(sock.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    return tl::unexpected(os_error("cannot bind " + host + ":" + std::to_string(port), errno));
  }
  if (::listen(sock.get(), kBacklog) != 0) return tl::unexpected(os_error("listen", errno));
  return sock;
}

Result<std::uint16_t> local_port(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return tl::unexpected(os_error("getsockname", errno));
  }
  return ntohs(addr.sin_port);
}

Result<PeerCredentials> peer_credentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return tl::unexpected(os_error("getsockopt SO_PEERCRED", errno));
  }
  PeerCredentials p;
  p.pid = cred.pid;
  p.uid = cred.uid;
  p.gid = cred.gid;
  std::vector<gid_t> groups(64);
  for (int tries = 0; tries < 4; ++tries) {
    socklen_t glen = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &glen) == 0) {
      groups.resize(glen / sizeof(gid_t));
      p.groups.assign(groups.begin(), groups.end());
      return p;
    }
    if (errno != ERANGE) return tl::unexpected(os_error("getsockopt SO_PEERGROUPS", errno));
    groups.resize(glen / sizeof(gid_t) + 1);
  }
  return tl::unexpected(os_error("getsockopt SO_PEERGROUPS", ERANGE));
}

std::uint32_t effective_uid() { return ::geteuid(); }

}  // namespace courier::sys
