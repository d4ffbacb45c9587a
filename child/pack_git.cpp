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

// git pack-objects' command line: the pack on stdout from the revisions on
// stdin, with progress; thin (deltas against objects the remote has) and
// with offset deltas only where the remote said it takes them.
std::vector<std::string> git_pack_argv(const PackSpec& spec, const std::string& git_dir) {
  std::vector<std::string> argv = {"git", "--git-dir=" + git_dir, "pack-objects", "--revs", "--stdout", "--progress"};
  if (spec.thin) argv.emplace_back("--thin");
  if (spec.ofs_delta) argv.emplace_back("--delta-base-offset");
  return argv;
}

}  // namespace

struct GitPackStream::State {
  const PackSpec& spec;
  EngineProcess git;
  sys::ScopedFd from_git;
  sys::ScopedFd git_err;
  std::optional<Error> write_error;
  GitStderr scan;
  unsigned char header[kPackHeader] = {};
  std::size_t header_have = 0;
  PackResult result;
  bool finished = false;

  State(const PackSpec& s, sys::Spawned p, sys::ScopedFd out, sys::ScopedFd err)
      : spec(s), git(std::move(p)), from_git(std::move(out)), git_err(std::move(err)), scan(s.progress) {}

  // git's stderr, as far as it can be read now, into the progress scanner.
  Result<void> drain_stderr() {
    char buf[4096];
    for (;;) {
      auto r = sys::read_nonblocking(git_err.get(), buf, sizeof buf);
      if (!r) return tl::unexpected(r.error());
      if (r->status == sys::ReadStatus::would_block) return {};
      if (r->status == sys::ReadStatus::eof) {
        git_err.reset();
        return {};
      }
      scan.feed(buf, r->bytes);
    }
  }

  // After stdout's end: stderr to its end, git reaped, its exit and the
  // header judged. Errors: leg_timeout, os_error.
  Result<void> finish() {
    while (git_err.valid()) {
      auto ready = sys::wait_readable_until({git_err.get()}, spec.deadline);
      if (!ready) return tl::unexpected(ready.error());
      if (ready->empty()) return fail(Errc::leg_timeout, "the deadline passed while git pack-objects was packing");
      if (auto ok = drain_stderr(); !ok) return ok;
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
    finished = true;
    return {};
  }

  Result<std::size_t> read(char* buf, std::size_t n) {
    if (finished) return std::size_t{0};
    while (from_git.valid()) {
      std::vector<int> fds{from_git.get()};
      if (git_err.valid()) fds.push_back(git_err.get());
      auto ready = sys::wait_readable_until(fds, spec.deadline);
      if (!ready) return tl::unexpected(ready.error());
      if (ready->empty()) return fail(Errc::leg_timeout, "the deadline passed while git pack-objects was packing");
      if (git_err.valid()) {
        if (auto ok = drain_stderr(); !ok) return tl::unexpected(ok.error());
      }
      auto r = sys::read_nonblocking(from_git.get(), buf, n);
      if (!r) return tl::unexpected(r.error());
      if (r->status == sys::ReadStatus::would_block) continue;
      if (r->status == sys::ReadStatus::eof) {
        from_git.reset();
        break;
      }
      for (std::size_t k = 0; k < r->bytes && header_have < kPackHeader; ++k) {
        header[header_have++] = static_cast<unsigned char>(buf[k]);
      }
      result.bytes += r->bytes;
      return r->bytes;
    }
    if (auto ok = finish(); !ok) return tl::unexpected(ok.error());
    return std::size_t{0};
  }
};

GitPackStream::GitPackStream(std::unique_ptr<State> state) : s_(std::move(state)) {}
GitPackStream::~GitPackStream() = default;

Result<std::unique_ptr<GitPackStream>> GitPackStream::start(const PackSpec& spec, const std::string& git_program,
                                                            const std::string& home) {
  auto plan = plan_git_pack(spec);
  if (!plan) return tl::unexpected(plan.error());
  sys::SpawnSpec s;
  s.exec_path = git_program;
  s.argv = git_pack_argv(spec, plan->git_dir);
  s.env = engine_env(home);
  s.new_process_group = false;
  auto spawned = sys::spawn_piped(std::move(s));
  if (!spawned) return fail(Errc::spawn_failed, "cannot start " + git_program + ": " + spawned.error().message);
  sys::ScopedFd to_git = std::move(spawned->stdin_w);
  auto state = std::make_unique<State>(spec, std::move(spawned->process), std::move(spawned->stdout_r),
                                       std::move(spawned->stderr_r));
  {
    // git reads every revision line before it writes a byte, so writing them
    // all first cannot deadlock. A git that died early gives EPIPE, not a
    // signal; its stderr and exit status then say why.
    sys::ScopedSigpipeBlock no_sigpipe;
    if (auto w = sys::write_all(to_git.get(), plan->revs.data(), plan->revs.size()); !w) state->write_error = w.error();
    to_git.reset();
  }
  if (auto ok = sys::set_nonblocking(state->from_git.get()); !ok) return tl::unexpected(ok.error());
  if (auto ok = sys::set_nonblocking(state->git_err.get()); !ok) return tl::unexpected(ok.error());
  return std::unique_ptr<GitPackStream>(new GitPackStream(std::move(state)));
}

Result<std::size_t> GitPackStream::read(char* buf, std::size_t n) { return s_->read(buf, n); }

const PackResult& GitPackStream::result() const { return s_->result; }

Result<PackResult> build_pack_with_git(const PackSpec& spec, const std::string& git_program, const std::string& home) {
  auto stream = GitPackStream::start(spec, git_program, home);
  if (!stream) return tl::unexpected(stream.error());
  std::vector<char> buf(64 * 1024);
  for (;;) {
    auto r = (*stream)->read(buf.data(), buf.size());
    if (!r) return tl::unexpected(r.error());
    if (*r == 0) return (*stream)->result();
    if (auto sunk = spec.sink(buf.data(), *r); !sunk) return tl::unexpected(sunk.error());
  }
}

}  // namespace courier::child
