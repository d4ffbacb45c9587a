// scratch_area.cpp — the scratch parent of this user and its bounded sweep
// (scratch_area.hpp). Removal walks descriptors from the verified parent's
// (sys/tree_removal.hpp), so no name is ever resolved through a link.
#include "supervisor/scratch_area.hpp"

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "sys/clock.hpp"
#include "sys/process.hpp"
#include "sys/scratch_dir.hpp"
#include "sys/tree_removal.hpp"

namespace courier::supervisor {

namespace {

std::mutex g_sweeping;

// A scratch directory a gone host of this user left, not kept.
bool sweepable(int parent_fd, const std::string& name) {
  const std::string prefix = kScratchPrefix;
  if (name.rfind(prefix, 0) != 0) return false;
  const long pid = std::atol(name.c_str() + prefix.size());
  if (pid <= 0 || sys::pid_exists(static_cast<pid_t>(pid))) return false;
  if (!sys::is_own_directory_at(parent_fd, name)) return false;
  return !sys::exists_at(parent_fd, name + "/" + kKeptMarker);
}

}  // namespace

std::string scratch_parent_path() {
  const char* env = std::getenv("TMPDIR");
  const std::string base = env && *env ? env : "/tmp";
  return sys::user_dir_name(base);
}

Result<sys::PrivateDir> open_scratch_parent() { return sys::open_private_dir(scratch_parent_path()); }

Result<std::string> make_scratch_dir(const sys::PrivateDir& parent) {
  return sys::make_unique_dir(parent.path + "/" + kScratchPrefix + std::to_string(sys::self_pid()) + "-");
}

bool sweep_scratch(const sys::PrivateDir& parent, std::chrono::milliseconds budget) {
  std::unique_lock lock(g_sweeping, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  const sys::MonoNs until = sys::mono_now_ns() + budget.count() * sys::kNsPerMs;
  for (const auto& name : sys::names_in(parent.fd.get())) {
    if (!sweepable(parent.fd.get(), name)) continue;
    if (!sys::remove_tree_until(parent.fd.get(), name, until)) return false;
  }
  return true;
}

void sweep_after_delivery() {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(scratch_parent_path(), ec))) return;  // none made
  if (auto parent = open_scratch_parent()) sweep_scratch(*parent, kSweepBudget);
}

}  // namespace courier::supervisor
