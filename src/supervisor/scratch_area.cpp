// scratch_area.cpp — the scratch parent of this user and its bounded sweep
// (scratch_area.hpp). Removal walks descriptors (openat with O_NOFOLLOW from
// the verified parent's), so no name is ever resolved through a link.
#include "supervisor/scratch_area.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "sys/clock.hpp"
#include "sys/process.hpp"
#include "sys/scratch_dir.hpp"

namespace courier::supervisor {

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// A tree deeper than this is not ours to walk to the bottom (git and the
// child make flat spools): it is left, not overflowed.
constexpr int kMaxDepth = 32;

std::mutex g_sweeping;

bool own_directory(int dir_fd, const char* name) {
  struct stat st {};
  return ::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid();
}

// The names in a directory (its descriptor is not consumed).
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

// Removes `name` in `dir_fd` and all below it, until `until`; true when
// it is gone.
bool remove_tree(int dir_fd, const std::string& name, sys::MonoNs until, int depth) {
  if (sys::mono_now_ns() >= until) return false;
  if (::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) return true;
  if (depth >= kMaxDepth) return false;
  sys::ScopedFd sub(::openat(dir_fd, name.c_str(), kDirFlags));
  if (!sub) return false;
  for (const auto& entry : names_in(sub.get())) {
    if (!remove_tree(sub.get(), entry, until, depth + 1)) return false;
  }
  return ::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT;
}

// A scratch directory a gone host of this user left, not kept.
bool sweepable(int parent_fd, const std::string& name) {
  const std::string prefix = kScratchPrefix;
  if (name.rfind(prefix, 0) != 0) return false;
  const long pid = std::atol(name.c_str() + prefix.size());
  if (pid <= 0 || sys::pid_exists(static_cast<pid_t>(pid))) return false;
  if (!own_directory(parent_fd, name.c_str())) return false;
  struct stat st {};
  const std::string marker = name + "/" + kKeptMarker;
  return ::fstatat(parent_fd, marker.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0;
}

}  // namespace

std::string scratch_parent_path() {
  const char* env = std::getenv("TMPDIR");
  const std::string base = env && *env ? env : "/tmp";
  return base + "/git-courier-" + std::to_string(::geteuid());
}

Result<sys::PrivateDir> open_scratch_parent() { return sys::open_private_dir(scratch_parent_path()); }

Result<std::string> make_scratch_dir(const sys::PrivateDir& parent) {
  return sys::make_unique_dir(parent.path + "/" + kScratchPrefix + std::to_string(sys::self_pid()) + "-");
}

bool sweep_scratch(const sys::PrivateDir& parent, std::chrono::milliseconds budget) {
  std::unique_lock lock(g_sweeping, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  const sys::MonoNs until = sys::mono_now_ns() + budget.count() * sys::kNsPerMs;
  for (const auto& name : names_in(parent.fd.get())) {
    if (!sweepable(parent.fd.get(), name)) continue;
    if (!remove_tree(parent.fd.get(), name, until, 0)) return false;
  }
  return true;
}

void sweep_after_delivery() {
  struct stat st {};
  if (::lstat(scratch_parent_path().c_str(), &st) != 0) return;  // no child made one: nothing to sweep
  if (auto parent = open_scratch_parent()) sweep_scratch(*parent, kSweepBudget);
}

}  // namespace courier::supervisor
