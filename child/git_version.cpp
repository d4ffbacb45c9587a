// git_version.cpp — the git the automatic pack engine may run: its version
// read from `git --version`, checked once per process and remembered. The
// child asks only when it is about to pack with git (never for a small
// push, which libgit2 packs), so a delivery that does not use git never
// starts one.
#include "sys/mutex.hpp"
#include "child/git_version.hpp"

#include <csignal>
#include <map>
#include <mutex>

#include "sys/clock.hpp"
#include "sys/events.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"

namespace courier::child {

namespace {

// `git --version` answers in a few milliseconds; a git that takes longer
// than this is not one to build packs with.
constexpr sys::MonoNs kVersionBound = 2'000 * sys::kNsPerMs;
// Its answer is one short line; more is not a git.
constexpr std::size_t kMaxVersionText = 256;

// Reads a number at text[i...]; nullopt when there is no digit.
std::optional<int> number_at(const std::string& text, std::size_t& i) {
  if (i >= text.size() || text[i] < '0' || text[i] > '9') return std::nullopt;
  long v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && v < 100'000) v = v * 10 + (text[i++] - '0');
  return static_cast<int>(v);
}

// `program --version`'s standard output, read until it ends or the bound.
// Errors: spawn_failed, os_error.
Result<std::string> version_text(const std::string& program) {
  sys::SpawnSpec s;
  s.exec_path = program;
  s.argv = {"git", "--version"};
  s.env = {"LC_ALL=C"};
  auto piped = sys::spawn_piped(std::move(s));
  if (!piped) return tl::unexpected(piped.error());
  piped->stdin_w.reset();
  piped->stderr_r.reset();
  const int pidfd = piped->process.pidfd.get();
  auto give_up = [&](Error e) -> Result<std::string> {
    (void)sys::pidfd_signal(pidfd, SIGKILL);
    (void)sys::reap(pidfd);
    return tl::unexpected(std::move(e));
  };
  if (auto nb = sys::set_nonblocking(piped->stdout_r.get()); !nb) return give_up(nb.error());
  const sys::MonoNs until = sys::mono_now_ns() + kVersionBound;
  std::string out;
  char buf[kMaxVersionText];
  while (out.size() < kMaxVersionText) {
    auto ready = sys::wait_readable_until({piped->stdout_r.get()}, until);
    if (!ready) return give_up(ready.error());
    if (ready->empty()) return give_up(Error{Errc::os_error, program + " --version did not answer within 2 s"});
    auto r = sys::read_nonblocking(piped->stdout_r.get(), buf, sizeof buf);
    if (!r) return give_up(r.error());
    if (r->status == sys::ReadStatus::eof) break;
    if (r->status == sys::ReadStatus::data) out.append(buf, r->bytes);
  }
  if (out.size() >= kMaxVersionText) return give_up(Error{Errc::os_error, program + " --version said too much"});
  auto st = sys::reap(pidfd);
  if (!st) return tl::unexpected(st.error());
  if (st->code != 0) return fail(Errc::invalid_value, program + " --version failed");
  return out;
}

// Errors: as usable_git.
Result<std::string> check(const std::string& program) {
  auto text = version_text(program);
  if (!text) return tl::unexpected(text.error());
  auto v = parse_git_version(*text);
  if (!v) return fail(Errc::invalid_value, program + " --version did not name a git version");
  if (*v < kMinGitVersion) {
    return fail(Errc::invalid_value, program + " is git " + std::to_string(v->major) + "." + std::to_string(v->minor) +
                                         "; the git pack engine needs 2.32.0 or later");
  }
  return program;
}

}  // namespace

std::optional<GitVersion> parse_git_version(const std::string& text) {
  const std::string prefix = "git version ";
  if (text.rfind(prefix, 0) != 0) return std::nullopt;
  std::size_t i = prefix.size();
  GitVersion v;
  auto major = number_at(text, i);
  if (!major || i >= text.size() || text[i++] != '.') return std::nullopt;
  auto minor = number_at(text, i);
  if (!minor) return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (auto patch = number_at(text, i)) v.patch = *patch;
  }
  return v;
}

Result<std::string> usable_git(const std::string& program) {
  const std::string& path = program;
  if (path.empty() || path.front() != '/') {
    return fail(Errc::invalid_argument, "git_program must be an absolute path, not '" + path + "'");
  }
  // One answer per program per process. The lock is held while git runs:
  // concurrent first deliveries wait for the one check instead of each
  // starting a git of their own.
  static sys::Mutex mu;
  static std::map<std::string, Result<std::string>> answers COURIER_GUARDED_BY(mu);
  sys::MutexLock lock(mu);
  auto it = answers.find(path);
  if (it == answers.end()) it = answers.emplace(path, check(path)).first;
  return it->second;
}

}  // namespace courier::child
