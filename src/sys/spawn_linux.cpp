// spawn_linux.cpp — clone3-based spawning and pidfd waiting (Linux).
//
// Why clone3 and not posix_spawn: glibc 2.36's posix_spawn can neither hand
// back a pidfd atomically nor start the child inside a cgroup
// (CLONE_INTO_CGROUP), and a child moved into its cgroup after birth has a
// window in which it could fork outside it. clone3 without CLONE_VM copies
// the parent's page tables (copy-on-write) like fork; the child then runs only
// async-signal-safe raw syscalls on memory prepared before the clone, and
// execs at once.
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "sys/io.hpp"
#include "sys/spawn.hpp"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace courier::sys {

namespace {

// The children spawn() started and reap() has not reaped (is_own_spawn).
std::mutex g_spawns_mu;
std::unordered_set<pid_t>& live_spawns() {
  static std::unordered_set<pid_t> set;
  return set;
}

// Everything the child needs, prepared before the clone (no allocation after).
struct ChildPlan {
  const char* exec_path;
  char* const* argv;
  char* const* envp;
  int fds[4];  // sources for 0, 1, 2, kInheritedFd (-1: none)
  pid_t parent;
  bool new_group;
  int err_fd;  // write end of the exec-error pipe (close-on-exec)
};

[[noreturn]] void child_fail(const ChildPlan& plan, int err) {
  [[maybe_unused]] ssize_t n = ::write(plan.err_fd, &err, sizeof err);
  ::_exit(127);
}

// Runs in the child between clone3 and execve: raw syscalls only.
[[noreturn]] void child_main(const ChildPlan& plan) {
  // Die with the spawning thread; then make sure it did not already die.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(plan, errno);
  if (::getppid() != plan.parent) ::_exit(127);
  if (plan.new_group && ::setpgid(0, 0) != 0) child_fail(plan, errno);

  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::sigaction(sig, &dfl, nullptr);  // fails harmlessly for glibc-reserved numbers
  }
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);

  // Sources are all >= 10 (spawn() guarantees it), so these cannot clobber
  // one another. dup2 clears close-on-exec on the new numbers.
  for (int target = 0; target < 4; ++target) {
    if (plan.fds[target] < 0) continue;
    if (::dup2(plan.fds[target], target) < 0) child_fail(plan, errno);
  }
  const unsigned first_closed = plan.fds[kInheritedFd] >= 0 ? kInheritedFd + 1 : kInheritedFd;
  // Mark everything else close-on-exec (the error pipe must survive until
  // exec). Fallback for kernels without close_range: walk to the limit.
  if (::syscall(SYS_close_range, first_closed, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    rlimit lim{};
    ::getrlimit(RLIMIT_NOFILE, &lim);
    const int max_fd = lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur > 65536 ? 65536 : static_cast<int>(lim.rlim_cur);
    for (int fd = static_cast<int>(first_closed); fd < max_fd; ++fd) {
      if (fd != plan.err_fd) ::close(fd);
    }
  }
  ::execve(plan.exec_path, plan.argv, plan.envp);
  child_fail(plan, errno);
}

std::vector<char*> c_strings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

Result<Spawned> spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return fail(Errc::spawn_failed, "spawn: empty argv");
  // Lift every descriptor we hand down to >= 10 so the child's dup2 into
  // 0..3 cannot overwrite a source it still needs.
  ScopedFd lifted[4];
  const int sources[4] = {spec.stdin_fd, spec.stdout_fd, spec.stderr_fd, spec.inherit_fd};
  ChildPlan plan{};
  for (int i = 0; i < 4; ++i) {
    plan.fds[i] = -1;
    if (sources[i] < 0) continue;
    auto d = dup_at_least(sources[i], 10);
    if (!d) return tl::unexpected(d.error());
    lifted[i] = std::move(*d);
    plan.fds[i] = lifted[i].get();
  }
  auto err_pipe = make_pipe();
  if (!err_pipe) return tl::unexpected(err_pipe.error());
  auto err_w = dup_at_least(err_pipe->write_end.get(), 10);
  if (!err_w) return tl::unexpected(err_w.error());
  err_pipe->write_end.reset();

  auto argv = c_strings(spec.argv);
  auto envp = c_strings(spec.env);
  plan.exec_path = spec.exec_path.c_str();
  plan.new_group = spec.new_process_group;
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.parent = ::getpid();
  plan.err_fd = err_w->get();

  int pidfd = -1;
  clone_args args{};
  args.flags = CLONE_PIDFD;
  args.pidfd = static_cast<__u64>(reinterpret_cast<std::uintptr_t>(&pidfd));
  args.exit_signal = 0;  // see spawn.hpp: nobody but us can reap it
  if (spec.cgroup_dir_fd >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = static_cast<__u64>(static_cast<unsigned>(spec.cgroup_dir_fd));
  }
  // clone3 and the registration under one lock: a subreaper that lists this
  // process's children after clone3 cannot ask is_own_spawn() before the
  // pid is registered.
  std::unique_lock<std::mutex> registering(g_spawns_mu);
  const long pid = ::syscall(SYS_clone3, &args, sizeof args);
  // The child goes straight to child_main, before anything else runs: it is
  // a copy of one thread of a multi-threaded process, so only
  // async-signal-safe calls are safe in it. Unlocking its copy of the lock
  // (a pthread call, which may take the futex path) is not one, and it has
  // no need to: it never returns (exec or _exit), and nothing it runs takes
  // the lock. The parent's lock is the parent's to release.
  if (pid == 0) child_main(plan);
  // Read at once: the registration below (it may allocate) and the unlock
  // are free to change errno.
  const int clone_errno = pid < 0 ? errno : 0;
  if (pid > 0) live_spawns().insert(static_cast<pid_t>(pid));
  registering.unlock();
  if (pid < 0) return tl::unexpected(Error{Errc::spawn_failed, std::string("clone3: ") + std::strerror(clone_errno)});

  Spawned out;
  out.pid = static_cast<pid_t>(pid);
  out.pidfd.reset(pidfd);
  err_w->reset();
  for (auto& l : lifted) l.reset();

  // EOF on the error pipe: exec succeeded (it was close-on-exec). Data: the
  // errno of the step that failed; the child has exited and we reap it.
  int child_errno = 0;
  auto n = read_some(err_pipe->read_end.get(), reinterpret_cast<char*>(&child_errno), sizeof child_errno);
  if (n && *n == 0) return out;
  (void)reap(out.pidfd.get());
  return fail(Errc::spawn_failed,
              "cannot start " + spec.exec_path + ": " + (n ? std::strerror(child_errno) : n.error().message));
}

Result<bool> has_exited(int pidfd) {
  siginfo_t info{};
  if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, WEXITED | WNOWAIT | WNOHANG | __WALL) !=
      0) {
    return tl::unexpected(os_error("waitid(P_PIDFD, WNOWAIT)", errno));
  }
  return info.si_pid != 0;
}

bool is_exiting(pid_t pid, int pidfd) {
  if (auto exited = has_exited(pidfd); exited && *exited) return true;
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // The command name may hold ')' or spaces: the fields start after the
  // last ')'. Then: state ppid pgrp session tty_nr tpgid flags (proc(5)).
  const char* fields = std::strrchr(buf, ')');
  unsigned long flags = 0;
  if (!fields || std::sscanf(fields + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1) return false;
  constexpr unsigned long kPfExiting = 0x4;  // include/linux/sched.h
  return (flags & kPfExiting) != 0;
}

Result<ExitStatus> reap(int pidfd) {
  siginfo_t info{};
  for (;;) {
    if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, WEXITED | __WALL) == 0) break;
    if (errno == EINTR) continue;
    return tl::unexpected(os_error("waitid(P_PIDFD)", errno));
  }
  {
    std::lock_guard<std::mutex> lock(g_spawns_mu);
    live_spawns().erase(info.si_pid);
  }
  ExitStatus s;
  if (info.si_code == CLD_EXITED) {
    s.code = info.si_status;
  } else {
    s.signal = info.si_status;
  }
  return s;
}

bool is_own_spawn(pid_t pid) {
  std::lock_guard<std::mutex> lock(g_spawns_mu);
  return live_spawns().count(pid) != 0;
}

Result<void> pidfd_signal(int pidfd, int sig) {
  if (::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) != 0 && errno != ESRCH) {
    return tl::unexpected(os_error("pidfd_send_signal", errno));
  }
  return {};
}

Result<PipedChild> spawn_piped(SpawnSpec spec) {
  auto in = make_pipe();
  if (!in) return tl::unexpected(in.error());
  auto out = make_pipe();
  if (!out) return tl::unexpected(out.error());
  auto err = make_pipe();
  if (!err) return tl::unexpected(err.error());
  spec.stdin_fd = in->read_end.get();
  spec.stdout_fd = out->write_end.get();
  spec.stderr_fd = err->write_end.get();
  auto child = spawn(spec);
  if (!child) return tl::unexpected(child.error());
  return PipedChild{std::move(*child), std::move(in->write_end), std::move(out->read_end), std::move(err->read_end)};
}

Result<void> signal_group(pid_t pgid, int sig) {
  if (::killpg(pgid, sig) != 0 && errno != ESRCH) return tl::unexpected(os_error("killpg", errno));
  return {};
}

Result<ScopedFd> pidfd_open(pid_t pid) {
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) return tl::unexpected(os_error("pidfd_open", errno));
  return ScopedFd(static_cast<int>(fd));
}

}  // namespace courier::sys
