// fixture_server.hpp — the test-side handle on fixtures/git_http_server.py
// (a smart-HTTP(S) git server in front of `git http-backend`, with fault
// injection), plus helpers that run the real `git` client with no machine or
// user configuration.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support.hpp"
#include "sys/fd.hpp"

namespace courier::test {

// ---- running git ----

struct GitResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
  bool ok() const { return exit_code == 0; }
};

// The environment every test git runs in: PATH, a throwaway HOME, LC_ALL=C
// (stable messages to match on), GIT_CONFIG_NOSYSTEM=1,
// GIT_CONFIG_GLOBAL=/dev/null, GIT_TERMINAL_PROMPT=0, fixed author and
// committer identity. `extra` entries (KEY=VALUE) are added or override.
std::vector<std::string> git_env(const std::vector<std::string>& extra = {});

// Runs `git -C cwd args...` (just `git args...` when cwd is empty) in
// git_env(extra_env) and captures what it said.
GitResult git(const std::vector<std::string>& args, const std::string& cwd = {},
              const std::vector<std::string>& extra_env = {});

// Like git() but throws std::runtime_error (with git's stderr) on failure,
// and returns stdout without the trailing newline.
std::string git_ok(const std::vector<std::string>& args, const std::string& cwd = {},
                   const std::vector<std::string>& extra_env = {});

// Creates a non-bare repository at `dir` (created if missing) on branch
// `main` with `commits` commits, each changing a file. Identity and dates
// are fixed, so the same call always yields the same object ids. Returns the
// tip commit id.
std::string make_source_repo(const std::string& dir, int commits);

// The absolute path of `program` found on $PATH (throws when absent).
std::string find_on_path(const std::string& program);

// ---- the fixture server ----

// Selects requests for a fault rule: exactly request number `request`, or
// the next request(s) whose method equals `method` and whose path+query
// contains `path` (empty = any). `times`: how many requests the rule
// applies to; 0 = every match until reset_faults().
struct RequestMatch {
  std::optional<long> request;
  std::string method;
  std::string path;
  int times = 1;

  static RequestMatch number(long n) { return RequestMatch{n, {}, {}, 1}; }
  static RequestMatch next(std::string method_name, std::string path_part = {}) {
    return RequestMatch{std::nullopt, std::move(method_name), std::move(path_part), 1};
  }
  static RequestMatch any() { return RequestMatch{}; }
};

// The server announced that it holds a request: by hold (headers and body
// read, the backend not started) or by hold_response_end (the backend done,
// the response sent but for its terminating chunk).
struct HeldEvent {
  long request = 0;
  long connection = 0;
  std::string method;
  std::string path;    // without the query
  std::string target;  // path+query
};

struct Counts {
  long total = 0;
  std::map<std::string, long> by_method_path;  // "POST /r.git/git-receive-pack" -> n
  long peak_receive_pack = 0;                  // most receive-pack POSTs in flight at once
  long active_receive_pack = 0;
  std::vector<long> held;
  long connections = 0;
  long handshake_failures = 0;  // TLS handshakes the client aborted (OpenSSL clients)
  long empty_connections = 0;   // closed before any request (GnuTLS clients rejecting the cert)
  long count(const std::string& method_path) const;
};

struct JournalEntry {
  long request = 0;
  long connection = 0;
  std::string method;
  std::string target;  // path+query
  std::string path;
  std::string query;
  std::string version;
  std::vector<std::pair<std::string, std::string>> headers;
  long long body_bytes = 0;
  bool chunked = false;
  std::int64_t start_ns = 0;           // CLOCK_MONOTONIC, like sys::mono_now_ns()
  std::optional<std::int64_t> end_ns;  // empty while in flight
  std::optional<int> status;           // empty if no status line was sent
  std::vector<std::string> faults;     // "hold", "respond", "close_after_headers", "hold_response_end", ...
  // The first value of a header (case-insensitive name), if sent.
  std::optional<std::string> header(const std::string& name) const;
};

enum class CloseMode {
  headers,  // send a status line and headers promising a body, then close
  none,     // close without sending anything
};

struct FixtureOptions {
  bool plain_http = false;
  long ready_timeout_ms = 30'000;  // certificate generation included
  // Authorization the server demands; by default none.
  // verify_key set: every request must carry `Authorization: Bearer <token>`
  // that courier-token-verifier accepts for that request under this public
  // key (a file, PEM or base64url, or the base64url raw key itself); a token
  // is accepted once (replay cache in replay_dir, default: inside the
  // server's own directory). Otherwise 401 with the verifier's reason.
  std::string verify_key;
  std::string verify_command;  // empty: the courier-token-verifier built with the tests
  std::string replay_dir;
  // "user:pass": every request must carry exactly this HTTP Basic credential.
  std::string basic_auth;
  // With basic_auth: the right credential is answered 403 (an account
  // without rights on the repository); a missing or wrong one still 401.
  bool basic_forbidden = false;
};

// Starts fixtures/git_http_server.py on 127.0.0.1 with its own CA, and drives
// its control channel. Not copyable or movable: a reader thread points at it.
// Construct it on the thread that will destroy it: the server is tied to the
// spawning thread (it is killed if that thread exits).
// Control methods throw std::runtime_error when the server answers ok:false
// or does not answer within the command timeout.
class FixtureServer {
 public:
  explicit FixtureServer(FixtureOptions options = {});
  ~FixtureServer();
  FixtureServer(const FixtureServer&) = delete;
  FixtureServer& operator=(const FixtureServer&) = delete;

  int port() const { return port_; }
  // The CA certificate that signs the server's certificate (empty in plain-http mode).
  const std::string& ca_file() const { return ca_file_; }
  // https://127.0.0.1:P/<repo>.git (http:// in plain-http mode).
  std::string url(const std::string& repo_name) const;
  // The directory holding the bare repositories.
  const std::string& repos_dir() const { return repos_dir_; }
  // The bare repository behind url(repo_name).
  std::string repo_path(const std::string& repo_name) const;
  // A scratch directory that lives as long as the server (for source repos).
  const std::string& scratch_dir() const { return scratch_dir_; }
  // git init --bare <repo_name>.git with http.receivepack=true; returns its path.
  std::string create_bare_repo(const std::string& repo_name);
  // What the server wrote to stderr so far (for failure messages).
  std::string log() const;
  pid_t pid() const { return pid_; }

  // ---- control commands ----
  // Sends one command object ({"cmd": ...}) and returns the reply; throws if
  // the reply says ok:false.
  nlohmann::json command(nlohmann::json cmd, long timeout_ms = 10'000);
  long hold(const RequestMatch& match);  // returns the rule id
  // Releases one held request, or all when `request` is empty; returns the released numbers.
  std::vector<long> release(std::optional<long> request = std::nullopt);
  long respond(const RequestMatch& match, int status, const std::string& location = {}, const std::string& body = {},
               const std::map<std::string, std::string>& headers = {});
  long close_after_headers(const RequestMatch& match, CloseMode mode = CloseMode::headers, bool run_backend = false);
  // Runs the backend to completion (its effects happen), sends its status,
  // headers and whole body chunked but withholds the terminating chunk,
  // announces the request as held (wait_for_held) and waits: release()
  // sends the end. Returns the rule id.
  long hold_response_end(const RequestMatch& match);
  Counts count();
  std::vector<JournalEntry> journal();
  long reset_faults();  // returns how many pending rules were dropped
  // The next `held` announcement not yet taken, waiting up to timeout_ms.
  std::optional<HeldEvent> wait_for_held(long timeout_ms);
  // Sends shutdown, waits (bounded) for exit, kills the process group if
  // needed, reaps. Returns the exit code (-1 if it had to be killed).
  // Idempotent; the destructor calls it.
  int shutdown(long timeout_ms = 10'000);

 private:
  void reader_loop();
  void send_line(const std::string& line);
  void stop_process(long timeout_ms);
  static nlohmann::json match_json(const RequestMatch& match);

  TempDir dir_;
  std::string state_dir_;
  std::string repos_dir_;
  std::string scratch_dir_;
  std::string log_file_;
  bool plain_http_ = false;
  int port_ = 0;
  std::string ca_file_;

  pid_t pid_ = 0;
  sys::ScopedFd pidfd_;
  sys::ScopedFd control_;  // the server's stdin
  sys::ScopedFd events_;   // the server's stdout
  std::thread reader_;
  bool stopped_ = false;
  int exit_code_ = -1;

  std::mutex command_mu_;  // one command in flight at a time
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<nlohmann::json> replies_;
  std::deque<nlohmann::json> events_queue_;
  std::optional<nlohmann::json> ready_;
  bool eof_ = false;
  long next_id_ = 1;
};

}  // namespace courier::test
