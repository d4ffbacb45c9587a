// pack_git.cpp — the git pack engine: the child runs `git pack-objects` to
// build the pack, reusing the deltas already stored in the repository's
// packs (libgit2's packbuilder searches for every delta again; see
// docs/performance.md).
//
// git runs in the child's own process group and cgroup — the delivery's kill
// domain — so the parent's one SIGKILL at the deadline ends it together with
// the child, and the stop is confirmed only once it, too, is gone (the
// census waits for every member of the group).
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "child/git_stderr.hpp"
#include "child/pack.hpp"
#include "sys/events.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"

namespace courier::child {

namespace {

// "PACK", version, object count: the header every pack stream starts with.
constexpr std::size_t kPackHeader = 12;

// Sole owner of the running git. A pack-objects that is abandoned (an error
// on our side, the deadline) is killed and reaped here, never left behind:
// it holds the repository open and would outlive the work it was for.
class EngineProcess {
 public:
  explicit EngineProcess(sys::Spawned s) : s_(std::move(s)) {}
  EngineProcess(const EngineProcess&) = delete;
  EngineProcess& operator=(const EngineProcess&) = delete;
  ~EngineProcess() {
    if (reaped_) return;
    (void)sys::pidfd_signal(s_.pidfd.get(), SIGKILL);
    (void)sys::reap(s_.pidfd.get());
  }
  // Errors: os_error.
  Result<sys::ExitStatus> wait() {
    auto st = sys::reap(s_.pidfd.get());
    if (st) reaped_ = true;
    return st;
  }

 private:
  sys::Spawned s_;
  bool reaped_ = false;
};

// git's whole environment: no system or global configuration (the pack
// depends only on the repository), no prompts, no replace objects (the ids
// sent are the ids stored).
std::vector<std::string> engine_env(const std::string& home) {
  const char* path = std::getenv("PATH");
  return {std::string("PATH=") + (path && *path ? path : "/usr/bin:/bin"),
          "HOME=" + home,
          "GIT_CONFIG_NOSYSTEM=1",
          "GIT_CONFIG_GLOBAL=/dev/null",
          "GIT_NO_REPLACE_OBJECTS=1",
          "GIT_TERMINAL_PROMPT=0",
          "LC_ALL=C"};
}

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

}  // namespace

Result<PackResult> build_pack_with_git(const PackSpec& spec, const std::string& git_program, const std::string& home) {
  auto plan = plan_git_pack(spec);
  if (!plan) return tl::unexpected(plan.error());
  sys::SpawnSpec s;
  s.exec_path = git_program;
  s.argv = {"git",    "--git-dir=" + plan->git_dir, "pack-objects", "--revs", "--stdout",
            "--thin", "--delta-base-offset",        "--progress"};
  s.env = engine_env(home);
  s.new_process_group = false;
  auto spawned = sys::spawn_piped(std::move(s));
  if (!spawned) return fail(Errc::spawn_failed, "cannot start " + git_program + ": " + spawned.error().message);
  EngineProcess git(std::move(spawned->process));
  sys::ScopedFd& to_git = spawned->stdin_w;
  sys::ScopedFd& from_git = spawned->stdout_r;
  sys::ScopedFd& git_err = spawned->stderr_r;

  std::optional<Error> write_error;
  {
    // git reads every revision line before it writes a byte, so writing them
    // all first cannot deadlock. A git that died early gives EPIPE, not a
    // signal; its stderr and exit status then say why.
    sys::ScopedSigpipeBlock no_sigpipe;
    if (auto w = sys::write_all(to_git.get(), plan->revs.data(), plan->revs.size()); !w) write_error = w.error();
    to_git.reset();
  }

  if (auto ok = sys::set_nonblocking(from_git.get()); !ok) return tl::unexpected(ok.error());
  if (auto ok = sys::set_nonblocking(git_err.get()); !ok) return tl::unexpected(ok.error());
  PackResult result;
  unsigned char header[kPackHeader];
  std::size_t header_have = 0;
  GitStderr scan(spec.progress);
  std::vector<char> buf(64 * 1024);
  while (from_git.valid() || git_err.valid()) {
    std::vector<int> fds;
    if (from_git.valid()) fds.push_back(from_git.get());
    if (git_err.valid()) fds.push_back(git_err.get());
    auto ready = sys::wait_readable_until(fds, spec.deadline);
    if (!ready) return tl::unexpected(ready.error());
    if (ready->empty()) return fail(Errc::leg_timeout, "the deadline passed while git pack-objects was packing");
    for (std::size_t i : *ready) {
      const bool is_out = fds[i] == from_git.get();
      auto r = sys::read_nonblocking(fds[i], buf.data(), buf.size());
      if (!r) return tl::unexpected(r.error());
      if (r->status == sys::ReadStatus::would_block) continue;
      if (r->status == sys::ReadStatus::eof) {
        (is_out ? from_git : git_err).reset();
        continue;
      }
      if (!is_out) {
        scan.feed(buf.data(), r->bytes);
        continue;
      }
      for (std::size_t k = 0; k < r->bytes && header_have < kPackHeader; ++k) {
        header[header_have++] = static_cast<unsigned char>(buf[k]);
      }
      if (auto sunk = spec.sink(buf.data(), r->bytes); !sunk) return tl::unexpected(sunk.error());
      result.bytes += r->bytes;
    }
  }
  auto status = git.wait();
  if (!status) return tl::unexpected(status.error());
  const std::string stderr_tail = scan.finish();
  if (status->code != 0) {
    const std::string how = status->signal ? "was killed by signal " + std::to_string(status->signal)
                                           : "exited with " + std::to_string(status->code);
    return fail(Errc::os_error, "git pack-objects " + how + (stderr_tail.empty() ? "" : ": " + stderr_tail));
  }
  if (write_error) return fail(Errc::os_error, "writing revisions to git pack-objects: " + write_error->message);
  if (header_have < kPackHeader || std::memcmp(header, "PACK", 4) != 0) {
    return fail(Errc::os_error, "git pack-objects wrote no pack header");
  }
  const std::uint32_t version = be32(header + 4);
  if (version != 2 && version != 3) {
    return fail(Errc::os_error, "git pack-objects wrote pack version " + std::to_string(version));
  }
  result.objects = be32(header + 8);
  return result;
}

}  // namespace courier::child
