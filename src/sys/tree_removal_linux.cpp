// tree_removal_linux.cpp — the raw calls behind tree_removal.hpp.
#include "sys/tree_removal.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "sys/fd.hpp"

namespace courier::sys {

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

bool remove_below(int dir_fd, const std::string& name, MonoNs until, int depth) {
  if (mono_now_ns() >= until) return false;
  // A file (or a link: unlinked, never followed) goes at once; a directory
  // answers EISDIR and is emptied first.
  if (::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) return true;
  if (depth >= kMaxRemovalDepth) return false;
  ScopedFd sub(::openat(dir_fd, name.c_str(), kDirFlags));
  if (!sub) return false;
  for (const auto& entry : names_in(sub.get())) {
    if (!remove_below(sub.get(), entry, until, depth + 1)) return false;
  }
  return ::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT;
}

}  // namespace

std::vector<std::string> names_in(int dir_fd) {
  std::vector<std::string> out;
  const int copy = ::openat(dir_fd, ".", kDirFlags);
  if (copy < 0) return out;
  DIR* d = ::fdopendir(copy);
  if (d == nullptr) {
    ::close(copy);
    return out;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  ::closedir(d);
  return out;
}

bool is_own_directory_at(int dir_fd, const std::string& name) {
  struct stat st {};
  return ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
         st.st_uid == ::geteuid();
}

bool exists_at(int dir_fd, const std::string& name) {
  struct stat st {};
  return ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool remove_tree_until(int dir_fd, const std::string& name, MonoNs until) {
  return remove_below(dir_fd, name, until, 0);
}

}  // namespace courier::sys
