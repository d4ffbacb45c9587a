// process_owner_linux.cpp — a process's owner, executable, process group and
// cgroup from /proc, each read with a bound on its size.
#include "sys/process_owner.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "sys/io.hpp"

namespace courier::sys {

namespace {

// /proc/<pid>/status and /proc/<pid>/cgroup are a few kilobytes; a line
// past this is not read.
constexpr std::size_t kMaxLine = 4096;

// The "Uid:" line of /proc/<pid>/status: real, effective, saved, fs.
bool read_uids(const std::string& dir, ProcessOwner& out) {
  std::ifstream in(dir + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > kMaxLine) return false;
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    unsigned long real = 0, effective = 0;
    if (!(fields >> real >> effective)) return false;
    out.uid = static_cast<uid_t>(real);
    out.euid = static_cast<uid_t>(effective);
    return true;
  }
  return false;
}

// The cgroup v2 line ("0::/path") of /proc/<pid>/cgroup.
std::string read_cgroup(const std::string& dir) {
  std::ifstream in(dir + "/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > kMaxLine) return {};
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return {};
}

Result<ProcessOwner> owner_at(const std::string& dir, pid_t pid) {
  ProcessOwner out;
  if (!read_uids(dir, out)) return fail(Errc::os_error, "cannot read the owner of process " + std::to_string(pid));
  struct stat exe {};
  if (::stat((dir + "/exe").c_str(), &exe) != 0) {
    return tl::unexpected(os_error("stat(" + dir + "/exe)", errno));
  }
  out.exe_dev = exe.st_dev;
  out.exe_ino = exe.st_ino;
  const pid_t pgid = ::getpgid(pid);
  if (pgid < 0) return tl::unexpected(os_error("getpgid(" + std::to_string(pid) + ")", errno));
  out.pgid = pgid;
  out.cgroup = read_cgroup(dir);
  return out;
}

}  // namespace

Result<ProcessOwner> process_owner(pid_t pid) {
  if (pid <= 0) return fail(Errc::invalid_argument, "no such process: " + std::to_string(pid));
  return owner_at("/proc/" + std::to_string(pid), pid);
}

Result<ProcessOwner> self_owner() { return owner_at("/proc/self", ::getpid()); }

}  // namespace courier::sys
