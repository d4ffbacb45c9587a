// ssh_connection.cpp — one ssh process and its three pipes, declared in
// ssh_connection.hpp.
#include "transport/ssh_connection.hpp"

#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "sys/events.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"

namespace courier::transport {

namespace {

constexpr std::size_t kChunk = 64 * 1024;
// What the remote may say while we still send, kept for read() (its report
// comes after the pack; this is room for progress, never a whole answer).
constexpr std::size_t kMaxPending = 64ull * 1024 * 1024;
// While ssh's input is full, how long one wait for room lasts before its
// output is read again.
constexpr sys::MonoNs kWriteStep = 10 * sys::kNsPerMs;

tl::unexpected<Error> timed_out(const char* what) {
  return fail(Errc::leg_timeout, std::string("the deadline passed while ") + what + " over ssh");
}

}  // namespace

struct SshConnection::State {
  sys::Spawned ssh;
  sys::ScopedFd to_ssh;
  sys::ScopedFd from_ssh;
  sys::ScopedFd ssh_err;
  sys::MonoNs deadline = 0;
  std::string err_text;
  std::string pending;  // stdout bytes read while a write waited
  std::size_t pending_at = 0;
  std::optional<sys::ExitStatus> exit;

  // One non-blocking read of `fd` into `out` (capped at `cap`); false at
  // its end (the descriptor is closed then).
  static Result<bool> drain(sys::ScopedFd& fd, std::string& out, std::size_t cap) {
    char buf[kChunk];
    for (;;) {
      auto r = sys::read_nonblocking(fd.get(), buf, sizeof buf);
      if (!r) return tl::unexpected(r.error());
      if (r->status == sys::ReadStatus::would_block) return true;
      if (r->status == sys::ReadStatus::eof) {
        fd.reset();
        return false;
      }
      if (out.size() < cap) out.append(buf, std::min(r->bytes, cap - out.size()));
    }
  }

  Result<void> drain_stderr() {
    if (!ssh_err.valid()) return {};
    auto r = drain(ssh_err, err_text, kMaxSshStderr);
    if (!r) return tl::unexpected(r.error());
    return {};
  }

  // Waits until stdout (or stderr) has something, or the deadline.
  Result<bool> wait_readable() {
    std::vector<int> fds{from_ssh.get()};
    if (ssh_err.valid()) fds.push_back(ssh_err.get());
    auto ready = sys::wait_readable_until(fds, deadline);
    if (!ready) return tl::unexpected(ready.error());
    return !ready->empty();
  }
};

SshConnection::SshConnection(std::unique_ptr<State> state) : s_(std::move(state)) {}

SshConnection::~SshConnection() {
  if (s_ && !s_->exit) {
    (void)sys::pidfd_signal(s_->ssh.pidfd.get(), SIGKILL);
    (void)sys::reap(s_->ssh.pidfd.get());
  }
}

Result<std::unique_ptr<SshConnection>> SshConnection::start(const SshStart& start) {
  sys::SpawnSpec spec;
  spec.exec_path = start.argv.front();
  spec.argv = start.argv;
  spec.env = start.env;
  // In the delivery child's process group (and cgroup): its kill domain.
  spec.new_process_group = false;
  auto spawned = sys::spawn_piped(std::move(spec));
  if (!spawned) {
    return fail(Errc::spawn_failed, "cannot start " + start.argv.front() + ": " + spawned.error().message);
  }
  auto state = std::make_unique<State>();
  state->ssh = std::move(spawned->process);
  state->to_ssh = std::move(spawned->stdin_w);
  state->from_ssh = std::move(spawned->stdout_r);
  state->ssh_err = std::move(spawned->stderr_r);
  state->deadline = start.deadline;
  for (int fd : {state->to_ssh.get(), state->from_ssh.get(), state->ssh_err.get()}) {
    if (auto ok = sys::set_nonblocking(fd); !ok) return tl::unexpected(ok.error());
  }
  return std::unique_ptr<SshConnection>(new SshConnection(std::move(state)));
}

Result<std::size_t> SshConnection::read(char* buf, std::size_t n) {
  State& s = *s_;
  if (s.pending_at < s.pending.size()) {
    const std::size_t k = std::min(n, s.pending.size() - s.pending_at);
    s.pending.copy(buf, k, s.pending_at);
    s.pending_at += k;
    return k;
  }
  while (s.from_ssh.valid()) {
    auto ready = s.wait_readable();
    if (!ready) return tl::unexpected(ready.error());
    if (!*ready) return timed_out("reading from the remote");
    if (auto ok = s.drain_stderr(); !ok) return tl::unexpected(ok.error());
    auto r = sys::read_nonblocking(s.from_ssh.get(), buf, n);
    if (!r) return tl::unexpected(r.error());
    if (r->status == sys::ReadStatus::would_block) continue;
    if (r->status == sys::ReadStatus::eof) {
      s.from_ssh.reset();
      break;
    }
    return r->bytes;
  }
  return std::size_t{0};
}

Result<void> SshConnection::write(std::string_view bytes) {
  State& s = *s_;
  sys::ScopedSigpipeBlock no_sigpipe;
  while (!bytes.empty()) {
    // Checked before every chunk, as the HTTP leg's read callback does (T3).
    if (sys::mono_now_ns() >= s.deadline) return timed_out("sending to the remote");
    if (!s.to_ssh.valid()) return fail(Errc::os_error, "ssh's input is closed");
    auto took = sys::write_nonblocking(s.to_ssh.get(), bytes.data(), bytes.size());
    if (!took) return tl::unexpected(took.error());
    bytes.remove_prefix(*took);
    if (bytes.empty()) break;
    // The pipe is full: what came on stdout and stderr meanwhile is read
    // (a remote that answers early must not stall us both), then room is
    // waited for in short steps, never past the deadline.
    if (s.from_ssh.valid()) {
      if (auto got = State::drain(s.from_ssh, s.pending, kMaxPending); !got) return tl::unexpected(got.error());
    }
    if (auto ok = s.drain_stderr(); !ok) return tl::unexpected(ok.error());
    const sys::MonoNs now = sys::mono_now_ns();
    auto room = sys::wait_fd_until(s.to_ssh.get(), sys::kWritable, std::min(s.deadline, now + kWriteStep));
    if (!room) return tl::unexpected(room.error());
  }
  return {};
}

void SshConnection::close_stdin() { s_->to_ssh.reset(); }

Result<sys::ExitStatus> SshConnection::finish() {
  State& s = *s_;
  while (s.ssh_err.valid()) {
    auto ready = sys::wait_readable_until({s.ssh_err.get()}, s.deadline);
    if (!ready) return tl::unexpected(ready.error());
    if (ready->empty()) return timed_out("waiting for ssh to end");
    if (auto ok = s.drain_stderr(); !ok) return tl::unexpected(ok.error());
  }
  auto done = sys::wait_readable_until({s.ssh.pidfd.get()}, s.deadline);
  if (!done) return tl::unexpected(done.error());
  if (done->empty()) return timed_out("waiting for ssh to end");
  auto st = sys::reap(s.ssh.pidfd.get());
  if (!st) return tl::unexpected(st.error());
  s.exit = *st;
  return *st;
}

const std::string& SshConnection::stderr_text() const { return s_->err_text; }

}  // namespace courier::transport
