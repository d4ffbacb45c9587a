// nginx_server.hpp — the test-side handle on fixtures/git-server: a real
// smart-HTTP git server (Debian's nginx over TLS, fcgiwrap, `git
// http-backend`) on a loopback port, with its own throwaway CA. Also runs
// scripts/gen-repo, which makes large deterministic source repositories.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "support.hpp"

namespace courier::test {

// Starts `fixtures/git-server start` in a fresh temporary directory; the
// destructor stops it (and, should the script fail to, kills what is left).
// When nginx or fcgiwrap is not installed the handle is not available() and
// unavailable_reason() says why, so a test can skip with that reason; any
// other failure to start throws std::runtime_error with the server's logs.
// Not copyable or movable.
class NginxServer {
 public:
  NginxServer();
  ~NginxServer();
  NginxServer(const NginxServer&) = delete;
  NginxServer& operator=(const NginxServer&) = delete;

  bool available() const { return available_; }
  const std::string& unavailable_reason() const { return unavailable_reason_; }

  int port() const { return port_; }
  // The CA certificate that signs the server's certificate (for GIT_SSL_CAINFO).
  const std::string& ca_file() const { return ca_file_; }
  // https://127.0.0.1:P
  const std::string& url_base() const { return url_base_; }
  // https://127.0.0.1:P/<repo_name>.git
  std::string url(const std::string& repo_name) const;
  // The bare repository behind url(repo_name).
  std::string repo_path(const std::string& repo_name) const;
  // `git-server create-repo`: a bare <repo_name>.git on branch main with
  // http.receivepack=true (an existing one is kept); returns its path.
  std::string create_bare_repo(const std::string& repo_name);
  // The script's state directory (certificates, nginx.conf, logs, repos/).
  const std::string& state_dir() const { return state_dir_; }
  // A scratch directory that lives as long as the server (for source repos).
  const std::string& scratch_dir() const { return scratch_dir_; }

  pid_t nginx_pid() const { return nginx_pid_; }
  pid_t fcgiwrap_pid() const { return fcgiwrap_pid_; }
  // Every process of the server still running (not a zombie): nginx's master
  // and workers, fcgiwrap and its pre-forked children, running backends.
  // Each master leads its own process group, which holds all of these.
  std::vector<pid_t> pids() const;
  // nginx's error log and fcgiwrap's log, for failure messages.
  std::string log() const;

  // `git-server stop`, then SIGKILL to whatever of the two process groups is
  // still running. True when the script stopped everything on its own.
  // Idempotent; the destructor calls it.
  bool stop();

 private:
  TempDir dir_;
  std::string state_dir_;
  std::string scratch_dir_;
  bool available_ = false;
  std::string unavailable_reason_;
  int port_ = 0;
  std::string ca_file_;
  std::string url_base_;
  pid_t nginx_pid_ = 0;
  pid_t fcgiwrap_pid_ = 0;
  bool stopped_ = false;
};

// Runs fixtures/git-server ARGS... in the environment the handle uses (no
// machine git configuration, /usr/sbin on PATH) and waits for it.
RunResult run_git_server(const std::vector<std::string>& args);

// What `scripts/gen-repo` made.
struct GeneratedRepo {
  long objects = 0;
  long commits = 0;
  std::string head;  // the tip of refs/heads/main
  std::string dir;
};

// Runs scripts/gen-repo DIR ARGS... (for example {"--commits", "2000"} or
// {"--objects", "110000"}): a bare, deterministic repository at `dir`.
// Throws std::runtime_error (with the script's stderr) on failure.
GeneratedRepo generate_repo(const std::string& dir, const std::vector<std::string>& args);

}  // namespace courier::test
