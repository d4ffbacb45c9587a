// socket_file.hpp — a Unix socket's file in a verified directory, handled as
// hostile ground (rule H1): what is at the name is looked at through a
// descriptor that follows no link, a stale socket is told from a live one by
// asking it (nobody answers: ECONNREFUSED), a new socket is bound under a
// temporary name through the directory's descriptor and then swapped into
// place, and only the inode this process bound is ever removed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "courier/result.hpp"
#include "sys/fd.hpp"

namespace courier::sys {

// One file's identity: its device and inode.
struct FileIdentity {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const FileIdentity&) const = default;
};

// The socket file this process bound: its name in its directory (a
// descriptor of its own on that directory) and its inode. Removed by
// remove() or when destroyed, and only while the name is still that inode:
// a file someone else put at the name since is left alone.
class BoundSocketFile {
 public:
  BoundSocketFile() = default;
  BoundSocketFile(ScopedFd dir, std::string name, FileIdentity id)
      : dir_(std::move(dir)), name_(std::move(name)), id_(id) {}
  BoundSocketFile(BoundSocketFile&&) noexcept = default;
  BoundSocketFile& operator=(BoundSocketFile&& o) noexcept {
    if (this != &o) {
      remove();
      dir_ = std::move(o.dir_);
      name_ = std::move(o.name_);
      id_ = o.id_;
    }
    return *this;
  }
  BoundSocketFile(const BoundSocketFile&) = delete;
  BoundSocketFile& operator=(const BoundSocketFile&) = delete;
  ~BoundSocketFile();

  // Unlinks the name if it still is this socket; at most once.
  void remove();
  // The same inode, now at `name` in the same directory (renamed there).
  void renamed(std::string name) { name_ = std::move(name); }
  const FileIdentity& identity() const { return id_; }

 private:
  ScopedFd dir_;
  std::string name_;
  FileIdentity id_;
};

// What is at `name` in the directory `dir` now: nothing (nullopt), or a
// stale socket (its identity): a socket of this user on which nobody
// answers. Refused with invalid_argument: anything but a socket (a symbolic
// link too), another user's socket, a socket some process answers on (the
// message names its pid, as the kernel gives it). `path` is only for
// messages. Errors: os_error.
Result<std::optional<FileIdentity>> find_stale_socket(int dir, const std::string& name, const std::string& path);

// Binds the unbound socket `sock` at `name` in `dir` and listens on it: it
// is bound under a temporary name through the directory's descriptor (never
// through a path someone may swap), made 0660, listened on, and only then
// put at `name`: with nothing there (`stale` nullopt) the name must still be
// free; over a stale socket the two are exchanged and the one taken out
// must be `stale` itself, else the exchange is undone and refused. Errors:
// invalid_argument (the name changed meanwhile), os_error.
Result<BoundSocketFile> place_socket(int dir, const std::string& name, int sock, int backlog,
                                     const std::optional<FileIdentity>& stale, const std::string& path);

}  // namespace courier::sys
