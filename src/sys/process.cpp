// process.cpp — process facts and settings over raw Linux syscalls.
#include "sys/process.hpp"

#include <dirent.h>
#include <signal.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

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

std::optional<ProcStat> proc_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // The command name is in parentheses and may itself hold ')' or spaces:
  // the fields start after the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  ProcStat st;
  long ppid = 0, pgid = 0;
  rest >> st.state >> ppid >> pgid;
  st.ppid = static_cast<pid_t>(ppid);
  st.pgid = static_cast<pid_t>(pgid);
  // Fields 6..21 are skipped; 22 is starttime, 38 exit_signal (proc(5)).
  std::string skip;
  for (int field = 6; field <= 21 && rest; ++field) rest >> skip;
  rest >> st.start_ticks;
  for (int field = 23; field <= 37 && rest; ++field) rest >> skip;
  rest >> st.exit_signal;
  if (!rest) return std::nullopt;
  return st;
}

namespace {

// Every process in /proc whose stat satisfies `keep` (one scan, one parser).
template <class Keep>
std::vector<pid_t> pids_where(Keep keep) {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    if (auto st = proc_stat(static_cast<pid_t>(pid)); st && keep(*st)) out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(d);
  return out;
}

}  // namespace

std::vector<pid_t> children_of_self() {
  const pid_t self = ::getpid();
  return pids_where([self](const ProcStat& st) { return st.ppid == self; });
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
  return pids_where([pgid](const ProcStat& st) { return st.pgid == pgid; });
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
