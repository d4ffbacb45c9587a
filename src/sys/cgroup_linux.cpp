// cgroup_linux.cpp — cgroup v2 kill domains.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sys/cgroup.hpp"
#include "sys/io.hpp"

namespace courier::sys {

namespace {

// Mount point of the cgroup2 hierarchy, from /proc/self/mountinfo.
std::string cgroup2_mount() {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto sep = line.find(" - ");
    if (sep == std::string::npos) continue;
    std::istringstream tail(line.substr(sep + 3));
    std::string fstype;
    tail >> fstype;
    if (fstype != "cgroup2") continue;
    std::istringstream head(line.substr(0, sep));
    std::string id, parent, devno, root, mount_point;
    head >> id >> parent >> devno >> root >> mount_point;
    return mount_point;
  }
  return {};
}

// This process's path inside the cgroup2 hierarchy ("0::/path").
std::string own_cgroup_path() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return {};
}

}  // namespace

Result<std::string> Cgroup::find_parent() {
  const std::string mount = cgroup2_mount();
  if (mount.empty()) return fail(Errc::os_error, "no cgroup2 hierarchy is mounted");
  std::string own = own_cgroup_path();
  if (own.empty()) return fail(Errc::os_error, "this process is not in the cgroup2 hierarchy");
  if (own == "/") own.clear();
  const std::string parent = mount + own;
  if (::access((parent + "/cgroup.procs").c_str(), W_OK) != 0) {
    return tl::unexpected(os_error(parent + " is not writable", errno));
  }
  return parent;
}

int Cgroup::sweep_stale(const std::string& parent, const std::string& prefix) {
  int removed = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::atol(name.c_str() + prefix.size());
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    // rmdir fails (EBUSY) on a populated cgroup: only empty ones go.
    if (::rmdir(e.path().c_str()) == 0) ++removed;
  }
  return removed;
}

Result<Cgroup> Cgroup::create(const std::string& parent, const std::string& name) {
  Cgroup cg;
  cg.path_ = parent + "/" + name;
  if (::mkdir(cg.path_.c_str(), 0755) != 0) return tl::unexpected(os_error("mkdir " + cg.path_, errno));
  cg.dir_.reset(::open(cg.path_.c_str(), O_DIRECTORY | O_CLOEXEC | O_RDONLY));
  if (!cg.dir_) {
    const int err = errno;
    ::rmdir(cg.path_.c_str());
    return tl::unexpected(os_error("open " + cg.path_, err));
  }
  cg.events_.reset(::openat(cg.dir_.get(), "cgroup.events", O_RDONLY | O_CLOEXEC));
  if (cg.events_) cg.kill_.reset(::openat(cg.dir_.get(), "cgroup.kill", O_WRONLY | O_CLOEXEC));
  if (!cg.events_ || !cg.kill_) {
    const int err = errno;
    cg.dir_.reset();
    cg.events_.reset();
    ::rmdir(cg.path_.c_str());
    return tl::unexpected(os_error(cg.path_ + " has no usable cgroup.events/cgroup.kill", err));
  }
  return cg;
}

Cgroup::~Cgroup() {
  if (!path_.empty() && dir_) (void)remove();
}

Result<void> Cgroup::kill() const {
  if (::write(kill_.get(), "1", 1) != 1) return tl::unexpected(os_error("write cgroup.kill", errno));
  return {};
}

Result<bool> Cgroup::populated() const {
  char buf[256];
  const ssize_t n = ::pread(events_.get(), buf, sizeof buf - 1, 0);
  if (n < 0) return tl::unexpected(os_error("read cgroup.events", errno));
  buf[n] = '\0';
  const std::string s(buf);
  const auto pos = s.find("populated ");
  if (pos == std::string::npos) return fail(Errc::os_error, "cgroup.events has no 'populated' line");
  return s[pos + 10] == '1';
}

Result<void> Cgroup::remove() {
  if (path_.empty()) return {};
  events_.reset();
  kill_.reset();
  dir_.reset();
  if (::rmdir(path_.c_str()) != 0) return tl::unexpected(os_error("rmdir " + path_, errno));
  path_.clear();
  return {};
}

}  // namespace courier::sys
