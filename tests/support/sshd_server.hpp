// sshd_server.hpp — a real SSH server for the tests: Debian's /usr/sbin/sshd
// (openssh-server) on a loopback port with its own configuration, host key
// and authorized_keys in a test's directory, serving the bare repositories
// of the machine to the current user (by key only). Never the system's sshd.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sys/fd.hpp"

namespace courier::test {

struct SshdOptions {
  std::string authorized_key_line;  // the test key's public line
};

class SshdServer {
 public:
  // Debian's /usr/sbin/sshd on 127.0.0.1, a free port, its own ed25519 host
  // key in `dir`, StrictModes no, the current user (root in CI) allowed by
  // key only. Waits until it listens (a connect succeeds). Throws
  // std::runtime_error (with sshd's log) when it cannot start.
  static SshdServer start(const std::filesystem::path& dir, const SshdOptions& o);
  int port() const;
  std::string user() const;                                      // the current user's name
  std::string host_key_line() const;                             // "ssh-ed25519 AAAA..." (public)
  std::string known_hosts_line() const;                          // "[127.0.0.1]:PORT ssh-ed25519 AAAA..."
  std::string url(const std::filesystem::path& abs_repo) const;  // ssh://USER@127.0.0.1:PORT/abs
  // What sshd logged so far (LogLevel VERBOSE): "Accepted publickey for ..."
  // tells that a client authenticated.
  std::string log() const;
  // The server's processes still running: the listener and every
  // connection's processes (their sessions, the commands they run).
  std::vector<pid_t> pids() const;
  ~SshdServer();  // stops it and reaps it; nothing left running

  SshdServer(SshdServer&& other) noexcept;
  SshdServer& operator=(SshdServer&&) = delete;
  SshdServer(const SshdServer&) = delete;
  SshdServer& operator=(const SshdServer&) = delete;

 private:
  SshdServer() = default;
  void stop();
  std::filesystem::path dir_;
  int port_ = 0;
  pid_t pid_ = 0;
  sys::ScopedFd pidfd_;
  std::string host_key_line_;
  std::string user_;
};

}  // namespace courier::test
