// private_dir_linux.cpp — a directory of our own and its files: the raw calls behind private_dir.hpp.
#include "sys/private_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "sys/dir_path.hpp"
#include "sys/io.hpp"

namespace courier::sys {

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::string octal_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

tl::unexpected<Error> unsafe(const std::string& what, const std::string& path, const std::string& why) {
  return fail(Errc::invalid_argument, what + " " + path + " is refused: " + why);
}

// A directory this call just made: given exactly 0700 (the umask may have
// taken owner bits), after checking that the name still is our directory.
Result<void> seal_created(const std::string& dir) {
  ScopedFd fd(::open(dir.c_str(), kDirFlags));
  if (!fd) return tl::unexpected(os_error("cannot open directory " + dir + " just created", errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return tl::unexpected(os_error("fstat " + dir, errno));
  if (st.st_uid != ::geteuid()) return unsafe("directory", dir, "it was replaced by another user's");
  if ((st.st_mode & 07777) != 0700 && ::fchmod(fd.get(), 0700) != 0) {
    return tl::unexpected(os_error("chmod 0700 " + dir, errno));
  }
  return {};
}

// mkdir -p: every component this call creates gets 0700; components that
// exist are left exactly as they are.
Result<void> create_missing(const std::string& path) {
  for (std::size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/') continue;
    const std::string prefix = path.substr(0, at);
    if (prefix.back() == '/') continue;  // "a//b"
    if (::mkdir(prefix.c_str(), 0700) == 0) {
      if (auto sealed = seal_created(prefix); !sealed) return sealed;
    } else if (errno != EEXIST) {
      return tl::unexpected(os_error("cannot create directory " + prefix, errno));
    }
  }
  return {};
}

Result<void> check_dir(const std::string& path, const struct stat& st) {
  if (!S_ISDIR(st.st_mode)) return unsafe("directory", path, "it is not a directory");
  if (st.st_uid != ::geteuid()) {
    return unsafe("directory", path,
                  "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
                      std::to_string(::geteuid()) + ")");
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    return unsafe("directory", path,
                  "it is writable by its group or by other users (mode " + octal_mode(st.st_mode) +
                      "); use a directory of your own, mode 0700");
  }
  return {};
}

}  // namespace

Result<PrivateDir> open_private_dir(const std::string& given) {
  // "link/" would open the link's target despite O_NOFOLLOW.
  auto named = directory_path(given, "directory");
  if (!named) return tl::unexpected(named.error());
  const std::string& path = *named;
  ScopedFd fd(::open(path.c_str(), kDirFlags));
  if (!fd && errno == ENOENT) {
    if (auto made = create_missing(path); !made) return tl::unexpected(made.error());
    fd.reset(::open(path.c_str(), kDirFlags));
  }
  if (!fd) {
    const int e = errno;
    if (e == ELOOP || e == ENOTDIR) {
      struct stat lst {};
      if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
        return unsafe("directory", path, "it is a symbolic link");
      }
      return unsafe("directory", path, "it is not a directory");
    }
    return tl::unexpected(os_error("cannot open directory " + path, e));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return tl::unexpected(os_error("fstat " + path, errno));
  if (auto ok = check_dir(path, st); !ok) return tl::unexpected(ok.error());
  return PrivateDir{path, std::move(fd)};
}

Result<bool> ensure_private_file(const PrivateDir& dir, const std::string& name, unsigned mode) {
  const std::string path = dir.path + "/" + name;
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return fail(Errc::invalid_argument, "bad file name '" + name + "' in " + dir.path);
  }
  const int flags = O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  ScopedFd fd(::openat(dir.fd.get(), name.c_str(), flags, static_cast<mode_t>(mode)));
  if (fd) {
    // Ours: created by this call, so its mode is ours to set, whatever the umask.
    if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) return tl::unexpected(os_error("chmod " + path, errno));
    return true;
  }
  if (errno != EEXIST) return tl::unexpected(os_error("cannot create " + path, errno));
  struct stat st {};
  if (::fstatat(dir.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return tl::unexpected(os_error("stat " + path, errno));
  }
  if (S_ISLNK(st.st_mode)) return unsafe("file", path, "it is a symbolic link");
  if (!S_ISREG(st.st_mode)) return unsafe("file", path, "it is not a regular file");
  if (st.st_uid != ::geteuid()) {
    return unsafe("file", path, "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user");
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    return unsafe("file", path, "it is writable by its group or by other users (mode " + octal_mode(st.st_mode) + ")");
  }
  return false;
}

}  // namespace courier::sys
