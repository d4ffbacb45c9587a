// process.cpp — process facts and settings over raw Linux syscalls.
#include "sys/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "sys/io.hpp"

extern char** environ;

namespace courier::sys {

Result<void> set_parent_death_kill() {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return tl::unexpected(os_error("prctl(PR_SET_PDEATHSIG)", errno));
  return {};
}

Result<void> set_child_subreaper(bool on) {
  if (::prctl(PR_SET_CHILD_SUBREAPER, on ? 1UL : 0UL) != 0) {
    return tl::unexpected(os_error("prctl(PR_SET_CHILD_SUBREAPER)", errno));
  }
  return {};
}

Result<void> change_directory(const std::string& path) {
  if (::chdir(path.c_str()) != 0) {
    const int err = errno;
    return fail(Errc::os_error, "cannot change to '" + path + "': " + std::strerror(err));
  }
  return {};
}

bool is_child_subreaper() {
  int on = 0;
  return ::prctl(PR_GET_CHILD_SUBREAPER, &on) == 0 && on != 0;
}

namespace {

// The fields after the command name of a /proc/<pid>/stat line. The name is
// in parentheses and may itself hold ')' or spaces: the fields start after
// the last ')'. Parsed in place, without streams: a service with subreaping
// reads the stat of every process on the host twice per delivery (strays.cpp),
// and the stream parser cost more than the kernel's own work on the file.
std::optional<ProcStat> parse_stat(std::string_view line) {
  const auto close = line.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(close + 1);
  // Field k (proc(5), from 1) of the line; fields 1 and 2 are before `rest`.
  auto field = [&rest](int k) -> std::string_view {
    std::size_t at = 0;
    for (int n = 3;; ++n) {
      at = rest.find_first_not_of(' ', at);
      if (at == std::string_view::npos) return {};
      const std::size_t end = std::min(rest.find(' ', at), rest.size());
      if (n == k) return rest.substr(at, end - at);
      at = end;
    }
  };
  auto number = [](std::string_view text, auto& out) {
    const char* last = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), last, out);
    return !text.empty() && ec == std::errc() && ptr == last;
  };
  ProcStat st;
  const std::string_view state = field(3);
  long ppid = 0, pgid = 0;
  // Field 22 is starttime, 38 exit_signal (proc(5)).
  if (state.size() != 1 || !number(field(4), ppid) || !number(field(5), pgid) || !number(field(22), st.start_ticks) ||
      !number(field(38), st.exit_signal)) {
    return std::nullopt;
  }
  st.state = state.front();
  st.ppid = static_cast<pid_t>(ppid);
  st.pgid = static_cast<pid_t>(pgid);
  return st;
}

// The stat file `rel` under the directory dir_fd (AT_FDCWD for an absolute
// path), read whole: one line well under 2 KiB.
std::optional<ProcStat> read_stat_at(int dir_fd, const char* rel) {
  const int fd = ::openat(dir_fd, rel, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::array<char, 2048> buf{};
  std::size_t got = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
    if (got == buf.size()) break;
  }
  ::close(fd);
  return parse_stat(std::string_view(buf.data(), got));
}

}  // namespace

std::optional<ProcStat> proc_stat(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  return read_stat_at(AT_FDCWD, path.c_str());
}

namespace {

// Every process in /proc that `pass_over` does not drop by its pid alone
// and whose stat satisfies `keep` (one scan, one parser).
template <class PassOver, class Keep>
std::vector<pid_t> pids_where(PassOver pass_over, Keep keep) {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  const int dir_fd = ::dirfd(d);
  std::array<char, 64> rel{};
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pass_over(static_cast<pid_t>(pid))) continue;
    // "<pid>/stat" opened under the directory already open: no path built.
    std::snprintf(rel.data(), rel.size(), "%ld/stat", pid);
    if (auto st = read_stat_at(dir_fd, rel.data()); st && keep(*st)) out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(d);
  return out;
}

}  // namespace

namespace {

// struct pidfd_info as Linux 6.13 first defined it (PIDFD_INFO_SIZE_VER0,
// 64 bytes); the headers this is built against may predate it.
struct PidfdInfoV0 {
  std::uint64_t mask;
  std::uint64_t cgroupid;
  std::uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  std::uint32_t spare0;
};
static_assert(sizeof(PidfdInfoV0) == 64);
constexpr std::uint64_t kPidfdInfoPid = 1;  // PIDFD_INFO_PID: pid, tgid and ppid filled
constexpr unsigned long kPidfdGetInfo = _IOWR(0xFF, 11, PidfdInfoV0);
std::atomic<bool> g_pidfd_info_missing{false};

// The parent of pid as one pidfd query answers it (Linux 6.13 and later),
// the same number /proc/<pid>/stat shows: far cheaper than that file, which
// the kernel formats whole (memory and CPU totals of every thread) for each
// read. nullopt when it cannot be asked (an older kernel, the process
// gone): the caller then reads the stat, as before.
std::optional<pid_t> pidfd_parent(pid_t pid) {
  if (g_pidfd_info_missing.load(std::memory_order_relaxed)) return std::nullopt;
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return std::nullopt;
  PidfdInfoV0 info{};
  info.mask = kPidfdInfoPid;
  const int rc = ::ioctl(fd, kPidfdGetInfo, &info);
  const int err = errno;
  ::close(fd);
  if (rc != 0) {
    if (err == ENOTTY || err == EINVAL) g_pidfd_info_missing.store(true, std::memory_order_relaxed);
    return std::nullopt;
  }
  if ((info.mask & kPidfdInfoPid) == 0) return std::nullopt;
  return static_cast<pid_t>(info.ppid);
}

}  // namespace

// Every pid's parent is read once, at one instant of the scan, as before. A
// pid whose pidfd names another parent (the host's other processes: nearly
// all of them) is passed over without its stat; one that names this
// process, or cannot say, is decided by its stat.
std::vector<pid_t> children_of_self() {
  const pid_t self = ::getpid();
  return pids_where(
      [self](pid_t pid) {
        auto parent = pidfd_parent(pid);
        return parent && *parent != self;
      },
      [self](const ProcStat& st) { return st.ppid == self; });
}

Result<void> kill_own_process_group() {
  if (::killpg(0, SIGKILL) != 0) return tl::unexpected(os_error("killpg", errno));
  return {};  // the caller dies on its way back to user space
}

pid_t self_pid() { return ::getpid(); }

pid_t parent_pid() { return ::getppid(); }
bool is_tty(int fd) { return ::isatty(fd) == 1; }

bool pid_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

Result<std::string> find_on_path(const std::string& name, const std::optional<std::string>& path) {
  const char* own = std::getenv("PATH");
  const std::string dirs = path ? *path : (own ? own : "/usr/bin:/bin");
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    start = colon + 1;
    if (dir.empty() || dir.front() != '/') continue;  // only absolute entries
    const std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return candidate;
  }
  return fail(Errc::invalid_argument, "no executable '" + name + "' on PATH (" + dirs + ")");
}

bool group_has_members(pid_t pgid) { return pgid > 0 && (::kill(-pgid, 0) == 0 || errno == EPERM); }

char proc_state(pid_t pid) {
  const auto st = proc_stat(pid);
  return st ? st->state : '\0';
}

std::vector<pid_t> pids_in_group(pid_t pgid) {
  return pids_where([](pid_t) { return false; }, [pgid](const ProcStat& st) { return st.pgid == pgid; });
}

std::vector<std::string> environment_keys() {
  std::vector<std::string> keys;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    keys.emplace_back(*e, eq ? static_cast<std::size_t>(eq - *e) : std::strlen(*e));
  }
  return keys;
}

std::vector<std::string> environment() {
  std::vector<std::string> entries;
  for (char** e = environ; e && *e; ++e) entries.emplace_back(*e);
  return entries;
}

bool has_unreaped_child() {
  siginfo_t info{};
  if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return false;
  return info.si_pid != 0;
}

}  // namespace courier::sys

namespace courier::sys {

ScopedSigpipeBlock::ScopedSigpipeBlock() {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  was_blocked_ = sigismember(&old, SIGPIPE) == 1;
  sigset_t pending;
  sigpending(&pending);
  was_pending_ = sigismember(&pending, SIGPIPE) == 1;
}

ScopedSigpipeBlock::~ScopedSigpipeBlock() {
  if (!was_pending_) {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    const timespec zero{0, 0};
    while (::sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
    }
  }
  if (!was_blocked_) {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_UNBLOCK, &pipe_only, nullptr);
  }
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace courier::sys
