// ssh_connection.hpp — the one connection of a push over ssh (T5): OpenSSH's
// ssh started by absolute path in the caller's process group (the delivery
// child's kill domain: the parent's kill at the deadline ends it with the
// child), its stdin and stdout the git protocol's two streams, its stderr
// captured up to a cap and never relayed (ssh -v says much, and what the
// remote command says on stderr is judged, not passed on). Every read and
// write waits for its descriptor with poll, never past the deadline.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "courier/result.hpp"
#include "sys/clock.hpp"
#include "sys/spawn.hpp"

namespace courier::transport {

// ssh's stderr kept, at most; the rest is counted and dropped.
inline constexpr std::size_t kMaxSshStderr = 256 * 1024;

struct SshStart {
  std::vector<std::string> argv;  // argv[0] is the program, an absolute path
  std::vector<std::string> env;   // the whole environment, KEY=VALUE
  sys::MonoNs deadline = 0;
};

class SshConnection {
 public:
  // Errors: spawn_failed (ssh could not be started), os_error.
  static Result<std::unique_ptr<SshConnection>> start(const SshStart& start);
  // An ssh still running is killed and reaped: an abandoned connection
  // leaves nothing behind.
  ~SshConnection();
  SshConnection(const SshConnection&) = delete;
  SshConnection& operator=(const SshConnection&) = delete;

  // Up to `n` bytes of ssh's stdout (bytes that came while write() waited
  // first), waiting until some come; 0 at its end. Errors: leg_timeout (the
  // deadline), os_error.
  Result<std::size_t> read(char* buf, std::size_t n);
  // All of `bytes` to ssh's stdin. While the pipe is full, stdout and stderr
  // are read on (kept for read()), so a remote that answers early cannot
  // stall both sides. Errors: leg_timeout, os_error (ssh's stdin is closed:
  // ssh ended; its stderr and exit say why).
  Result<void> write(std::string_view bytes);
  // The end of what we send: the remote command reads end-of-file.
  void close_stdin();
  // After stdout's end: stderr read to its end and ssh reaped, both by the
  // deadline. Errors: leg_timeout, os_error.
  Result<sys::ExitStatus> finish();
  // What ssh wrote on stderr so far (at most kMaxSshStderr bytes).
  const std::string& stderr_text() const;

  struct State;

 private:
  explicit SshConnection(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

}  // namespace courier::transport
