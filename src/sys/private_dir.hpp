// private_dir.hpp — a directory of this user's own and the files in it
// (rule H1): the journal's directory and its database file.
//
// Stricter than a lane directory (flock.hpp): no shared group, no root-owned
// directory for another user. Nothing here changes the mode of anything
// this process did not create, or follows a symbolic link.
#pragma once

#include <string>

#include "courier/result.hpp"
#include "sys/fd.hpp"

namespace courier::sys {

struct PrivateDir {
  std::string path;
  ScopedFd fd;  // O_DIRECTORY, held so files are opened relative to this very directory
};

// Opens `path`, creating it and its missing parents (like `mkdir -p`) when
// absent: each directory this call creates gets exactly mode 0700 whatever
// the umask; directories that exist are left as they are. The directory must
// be a real directory (not a symbolic link) owned by the effective uid, with
// no group or other write permission. Errors: invalid_argument (unsafe: the
// message names the path and what is wrong), os_error (cannot create or open).
Result<PrivateDir> open_private_dir(const std::string& path);

// Makes sure `name` in the verified directory is a file of ours. When
// absent it is created with openat(dir, name, O_CREAT|O_EXCL|O_RDWR|
// O_NOFOLLOW|O_CLOEXEC) and given exactly `mode` (ours: we created it),
// then closed; returns true. When present it is examined with
// fstatat(AT_SYMLINK_NOFOLLOW) without opening it (closing a descriptor of a
// file drops every POSIX lock this process holds on it, SQLite's included),
// and must be a regular file owned by the effective uid, not writable by
// group or others; returns false. Errors: invalid_argument (a symbolic link,
// not a regular file, not ours), os_error.
Result<bool> ensure_private_file(const PrivateDir& dir, const std::string& name, unsigned mode);

}  // namespace courier::sys
