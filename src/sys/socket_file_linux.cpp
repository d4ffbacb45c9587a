// socket_file_linux.cpp — the raw calls behind socket_file.hpp.
//
// bind(2) and connect(2) take a path, not a directory descriptor. The
// kernel's /proc/self/fd/N is a link to the very file (or directory)
// descriptor N holds, whatever has happened to its name since: binding
// "/proc/self/fd/DIR/NAME" creates NAME in the directory that was verified,
// and connecting to "/proc/self/fd/F" (F an O_PATH descriptor) reaches the
// socket whose inode was looked at. Both paths are short, whatever the
// length of the socket's own.
#include "sys/socket_file.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>  // renameat2
#include <cstring>

#include "sys/io.hpp"

namespace courier::sys {

namespace {

FileIdentity identity_of(const struct stat& st) {
  return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

// The address of the file descriptor `fd` holds (or of `name` in the
// directory it holds), through /proc/self/fd.
sockaddr_un proc_address(int fd, const std::string& name = {}) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = "/proc/self/fd/" + std::to_string(fd) + (name.empty() ? "" : "/" + name);
  std::memcpy(addr.sun_path, p.c_str(), std::min(p.size() + 1, sizeof addr.sun_path - 1));
  return addr;
}

// The paths through /proc/self/fd need /proc: said when they are missing.
std::string proc_hint(int err) { return err == ENOENT ? " (through /proc/self/fd: is /proc mounted?)" : ""; }

// Whether some process answers on the socket file `file` (an O_PATH
// descriptor): nullopt when nobody does (ECONNREFUSED), else its pid (0 when
// the kernel cannot say: a full backlog answers EAGAIN, and is alive too).
Result<std::optional<std::int64_t>> who_answers(int file, const std::string& path) {
  ScopedFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!probe) return tl::unexpected(os_error("socket", errno));
  const sockaddr_un addr = proc_address(file);
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    ucred cred{};
    socklen_t len = sizeof cred;
    const bool known = ::getsockopt(probe.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
    return std::optional<std::int64_t>(known ? cred.pid : 0);
  }
  if (errno == ECONNREFUSED) return std::optional<std::int64_t>();
  if (errno == EAGAIN) return std::optional<std::int64_t>(0);
  return tl::unexpected(os_error("cannot ask whether a process answers on " + path + proc_hint(errno), errno));
}

// `name` in `dir` held open without following a link (a link is held as
// itself), `st` its status; nullopt when nothing is there.
Result<std::optional<FileHold>> hold_name(int dir, const std::string& name, const std::string& path, struct stat& st) {
  ScopedFd fd(::openat(dir, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return std::optional<FileHold>();
    return tl::unexpected(os_error("cannot look at " + path, errno));
  }
  if (::fstat(fd.get(), &st) != 0) return tl::unexpected(os_error("fstat " + path, errno));
  return std::optional<FileHold>(FileHold{std::move(fd), identity_of(st)});
}

// The temporary name the socket is bound under, in the socket's directory:
// this process's own, so two services binding beside each other (each under
// its own lock) never meet on it.
std::string temporary_name() { return ".git-courier-bind-" + std::to_string(::getpid()); }

// The socket at `tmp` put at `name`. With nothing expected there, the name
// must still be free (RENAME_NOREPLACE); over a stale socket the two are
// exchanged, and what came out must be that socket: it is then removed.
Result<void> swap_into_place(int dir, const std::string& tmp, const std::string& name,
                             const std::optional<FileHold>& stale, const std::string& path) {
  if (!stale) {
    if (::renameat2(dir, tmp.c_str(), dir, name.c_str(), RENAME_NOREPLACE) == 0) return {};
    if (errno == EEXIST) return fail(Errc::invalid_argument, path + " appeared while the service was binding it");
    return tl::unexpected(os_error("cannot put the socket at " + path, errno));
  }
  if (::renameat2(dir, tmp.c_str(), dir, name.c_str(), RENAME_EXCHANGE) != 0) {
    if (errno == ENOENT) return fail(Errc::invalid_argument, path + " vanished while the service was replacing it");
    return tl::unexpected(os_error("cannot put the socket at " + path, errno));
  }
  struct stat out {};
  if (::fstatat(dir, tmp.c_str(), &out, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(out.st_mode) &&
      identity_of(out) == stale->id) {
    (void)::unlinkat(dir, tmp.c_str(), 0);  // the stale socket, verified: ours to remove
    return {};
  }
  // Someone else's file came out: it goes back where it was.
  (void)::renameat2(dir, tmp.c_str(), dir, name.c_str(), RENAME_EXCHANGE);
  return fail(Errc::invalid_argument, path + " was replaced while the service was replacing a stale socket there");
}

}  // namespace

BoundSocketFile::~BoundSocketFile() { remove(); }

void BoundSocketFile::remove() {
  if (!dir_) return;
  struct stat st {};
  if (::fstatat(dir_.get(), name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode) &&
      identity_of(st) == file_.id) {
    (void)::unlinkat(dir_.get(), name_.c_str(), 0);
  }
  dir_.reset();
  file_.fd.reset();
}

Result<std::optional<FileHold>> find_stale_socket(int dir, const std::string& name, const std::string& path) {
  struct stat st {};
  auto held = hold_name(dir, name, path, st);
  if (!held || !*held) return held;
  if (!S_ISSOCK(st.st_mode)) {
    return fail(Errc::invalid_argument, path + " exists and is not a socket: remove it, or choose another --socket");
  }
  if (st.st_uid != ::geteuid()) {
    return fail(Errc::invalid_argument,
                path + " is a socket of uid " + std::to_string(st.st_uid) + ", not this user's: it is left alone");
  }
  auto answers = who_answers((*held)->fd.get(), path);
  if (!answers) return tl::unexpected(answers.error());
  if (*answers) {
    return fail(Errc::invalid_argument,
                "a process" + (**answers > 0 ? " (pid " + std::to_string(**answers) + ")" : std::string()) +
                    " answers on " + path + ": stop it, or choose another --socket");
  }
  return held;
}

Result<BoundSocketFile> place_socket(int dir, const std::string& name, int sock, int backlog,
                                     const std::optional<FileHold>& stale, const std::string& path) {
  ScopedFd own_dir(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
  if (!own_dir) return tl::unexpected(os_error("dup the socket's directory", errno));
  const std::string tmp = temporary_name();
  // A start of an earlier process with this pid killed between its bind and
  // its swap left the name: removed when it is a stale socket of ours.
  auto leftover = find_stale_socket(dir, tmp, path + "'s temporary name " + tmp);
  if (!leftover) return tl::unexpected(leftover.error());
  if (*leftover) (void)::unlinkat(dir, tmp.c_str(), 0);
  const sockaddr_un addr = proc_address(dir, tmp);
  if (::bind(sock, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    return tl::unexpected(os_error("cannot bind " + path + " (as " + tmp + " beside it)" + proc_hint(errno), errno));
  }
  struct stat st {};
  auto held = hold_name(dir, tmp, path, st);
  if (!held) return tl::unexpected(held.error());
  if (!*held || !S_ISSOCK(st.st_mode)) {
    return fail(Errc::os_error, "the socket just bound as " + tmp + " beside " + path + " is not there");
  }
  // From here the temporary file is this socket's: removed on every failure.
  BoundSocketFile bound(std::move(own_dir), tmp, std::move(**held));
  // connect(2) needs write permission on the socket: the user and the
  // group may connect; the directory and the peer check decide who gets in.
  if (::fchmodat(dir, tmp.c_str(), 0660, 0) != 0) return tl::unexpected(os_error("chmod " + path, errno));
  // Listening before it has its name: a caller never finds it refusing.
  if (::listen(sock, backlog) != 0) return tl::unexpected(os_error("listen " + path, errno));
  if (auto placed = swap_into_place(dir, tmp, name, stale, path); !placed) return tl::unexpected(placed.error());
  bound.renamed(name);  // the same file, under its own name now
  return bound;
}

}  // namespace courier::sys
