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

// One file's identity: its device and inode. Compared only while a
// descriptor holds the file open (FileHold): the number of an inode that
// was freed is given to the next file made.
struct FileIdentity {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const FileIdentity&) const = default;
};

// A file held open by an O_PATH descriptor (no link followed), so that its
// inode, and with it its identity, cannot go to another file meanwhile.
struct FileHold {
  ScopedFd fd;
  FileIdentity id;
};

// The socket file this process bound: its name in its directory (a
// descriptor of its own on that directory) and the file itself, held.
// Removed by remove() or when destroyed, and only while the name is still
// that file: one someone else put at the name since is left alone.
class BoundSocketFile {
 public:
  BoundSocketFile() = default;
  BoundSocketFile(ScopedFd dir, std::string name, FileHold file)
      : dir_(std::move(dir)), name_(std::move(name)), file_(std::move(file)) {}
  BoundSocketFile(BoundSocketFile&&) noexcept = default;
  BoundSocketFile& operator=(BoundSocketFile&& o) noexcept {
    if (this != &o) {
      remove();
      dir_ = std::move(o.dir_);
      name_ = std::move(o.name_);
      file_ = std::move(o.file_);
    }
    return *this;
  }
  BoundSocketFile(const BoundSocketFile&) = delete;
  BoundSocketFile& operator=(const BoundSocketFile&) = delete;
  ~BoundSocketFile();

  // Unlinks the name if it still is this socket; at most once.
  void remove();
  // The same file, now at `name` in the same directory (renamed there).
  void renamed(std::string name) { name_ = std::move(name); }

 private:
  ScopedFd dir_;
  std::string name_;
  FileHold file_;
};

// What is at `name` in the directory `dir` now: nothing (nullopt), or a
// stale socket, held: a socket of this user on which nobody answers.
// Refused with invalid_argument: anything but a socket (a symbolic link
// too), another user's socket, a socket some process answers on (the
// message names its pid, as the kernel gives it). `path` is only for
// messages. Errors: os_error.
Result<std::optional<FileHold>> find_stale_socket(int dir, const std::string& name, const std::string& path);

// Binds the unbound socket `sock` at `name` in `dir` and listens on it: it
// is bound under a temporary name through the directory's descriptor (never
// through a path someone may swap), made 0660, listened on, and only then
// put at `name`: with nothing there (`stale` nullopt) the name must still be
// free; over a stale socket the two are exchanged and the one taken out
// must be `stale` itself, else the exchange is undone and refused. Errors:
// invalid_argument (the name changed meanwhile), os_error.
Result<BoundSocketFile> place_socket(int dir, const std::string& name, int sock, int backlog,
                                     const std::optional<FileHold>& stale, const std::string& path);

}  // namespace courier::sys
