// fixture_server.cpp — the test-side handle on fixtures/git_http_server.py and
// the git-running helpers declared in fixture_server.hpp.
#include "fixture_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sys/io.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"
#include "support.hpp"

namespace courier::test {

namespace {

using Clock = std::chrono::steady_clock;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// A HOME for every git the tests run: empty, so nothing of the user's leaks in.
const std::string& git_home() {
  static const TempDir home;
  return home.path();
}

// Fixed identity and date: the same content always makes the same commits.
constexpr long kEpoch = 1'700'000'000;

}  // namespace

// ---- running git ----

std::string find_on_path(const std::string& program) {
  auto found = sys::find_on_path(program);
  if (!found) throw std::runtime_error(found.error().message);
  return *found;
}

std::vector<std::string> git_env(const std::vector<std::string>& extra) {
  std::map<std::string, std::string> vars = {
      {"PATH", env_or("PATH", "/usr/bin:/bin")},
      {"HOME", git_home()},
      {"LC_ALL", "C"},
      {"GIT_CONFIG_NOSYSTEM", "1"},
      {"GIT_CONFIG_GLOBAL", "/dev/null"},
      {"GIT_TERMINAL_PROMPT", "0"},
      {"GIT_AUTHOR_NAME", "Courier Test"},
      {"GIT_AUTHOR_EMAIL", "courier-test@example.invalid"},
      {"GIT_AUTHOR_DATE", std::to_string(kEpoch) + " +0000"},
      {"GIT_COMMITTER_NAME", "Courier Test"},
      {"GIT_COMMITTER_EMAIL", "courier-test@example.invalid"},
      {"GIT_COMMITTER_DATE", std::to_string(kEpoch) + " +0000"},
  };
  if (const char* tmp = std::getenv("TMPDIR")) vars["TMPDIR"] = tmp;
  for (const auto& e : extra) {
    const auto eq = e.find('=');
    if (eq == std::string::npos) throw std::runtime_error("git_env: not KEY=VALUE: " + e);
    vars[e.substr(0, eq)] = e.substr(eq + 1);
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

GitResult git(const std::vector<std::string>& args, const std::string& cwd, const std::vector<std::string>& extra_env) {
  static const std::string git_path = find_on_path("git");
  std::vector<std::string> argv = {git_path};
  if (!cwd.empty()) {
    argv.push_back("-C");
    argv.push_back(cwd);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult r = run(argv, {}, Stdin::bytes, git_env(extra_env));
  return GitResult{r.exit_code, r.out, r.err};
}

std::string git_ok(const std::vector<std::string>& args, const std::string& cwd,
                   const std::vector<std::string>& extra_env) {
  GitResult r = git(args, cwd, extra_env);
  if (!r.ok()) {
    std::string cmd = "git";
    for (const auto& a : args) cmd += " " + a;
    throw std::runtime_error(cmd + " failed (" + std::to_string(r.exit_code) + "): " + r.err);
  }
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

std::string make_source_repo(const std::string& dir, int commits) {
  std::filesystem::create_directories(dir);
  git_ok({"init", "-q", "--initial-branch=main", dir});
  std::string content;
  for (int i = 1; i <= commits; ++i) {
    content += "line " + std::to_string(i) + "\n";
    std::ofstream(dir + "/file.txt", std::ios::binary | std::ios::trunc) << content;
    const std::string date = std::to_string(kEpoch + 60L * i) + " +0000";
    git_ok({"add", "file.txt"}, dir);
    git_ok({"commit", "-q", "-m", "commit " + std::to_string(i)}, dir,
           {"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date});
  }
  return commits > 0 ? git_ok({"rev-parse", "HEAD"}, dir) : std::string();
}

// ---- parsed replies ----

long Counts::count(const std::string& method_path) const {
  const auto it = by_method_path.find(method_path);
  return it == by_method_path.end() ? 0 : it->second;
}

std::optional<std::string> JournalEntry::header(const std::string& name) const {
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string want = lower(name);
  for (const auto& [k, v] : headers) {
    if (lower(k) == want) return v;
  }
  return std::nullopt;
}

// ---- the fixture server ----

FixtureServer::FixtureServer(FixtureOptions options) : plain_http_(options.plain_http) {
  state_dir_ = dir_.path() + "/state";
  repos_dir_ = dir_.path() + "/repos";
  scratch_dir_ = dir_.path() + "/scratch";
  log_file_ = dir_.path() + "/server.log";
  for (const auto& d : {state_dir_, repos_dir_, scratch_dir_, dir_.path() + "/home"}) {
    std::filesystem::create_directories(d);
  }

  auto control = sys::make_pipe();
  if (!control) throw std::runtime_error("fixture server: " + control.error().message);
  // stdout is a socket, not a pipe, so that teardown can wake the reader
  // thread with shutdown(2) even if some stray process still held the
  // writing end.
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    throw std::runtime_error("fixture server: socketpair failed");
  }
  events_.reset(pair[0]);
  sys::ScopedFd server_out(pair[1]);
  sys::ScopedFd log_fd(::open(log_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!log_fd) throw std::runtime_error("fixture server: cannot create " + log_file_);

  sys::SpawnSpec spec;
  spec.exec_path = find_on_path("python3");
  spec.argv = {"python3", COURIER_FIXTURE_SERVER, "--root", repos_dir_, "--state-dir", state_dir_,
               "--git",   find_on_path("git")};
  if (plain_http_) spec.argv.push_back("--plain-http");
  if (!options.verify_key.empty()) {
    std::string command = options.verify_command;
#ifdef COURIER_TOKEN_VERIFIER
    if (command.empty()) command = COURIER_TOKEN_VERIFIER;
#endif
    if (command.empty()) throw std::runtime_error("fixture server: verify_key given but no verify_command");
    const std::string replay = options.replay_dir.empty() ? state_dir_ + "/replay" : options.replay_dir;
    spec.argv.insert(spec.argv.end(),
                     {"--verify-command", command, "--verify-key", options.verify_key, "--replay-dir", replay});
  }
  if (!options.basic_auth.empty()) spec.argv.insert(spec.argv.end(), {"--basic-auth", options.basic_auth});
  if (options.basic_forbidden) spec.argv.push_back("--basic-forbidden");
  // The caller's PATH (and a pyenv's settings) find python3, git and openssl;
  // HOME and the GIT_CONFIG_* variables keep git http-backend away from any
  // real configuration.
  spec.env = {"PATH=" + env_or("PATH", "/usr/bin:/bin"),
              "HOME=" + dir_.path() + "/home",
              "LC_ALL=C",
              "PYTHONUNBUFFERED=1",
              "PYTHONDONTWRITEBYTECODE=1",
              "GIT_CONFIG_NOSYSTEM=1",
              "GIT_CONFIG_GLOBAL=/dev/null"};
  if (const char* tmp = std::getenv("TMPDIR")) spec.env.push_back(std::string("TMPDIR=") + tmp);
  for (const char* name : {"PYENV_ROOT", "PYENV_VERSION"}) {
    if (const char* v = std::getenv(name)) spec.env.push_back(std::string(name) + "=" + v);
  }
  spec.stdin_fd = control->read_end.get();
  spec.stdout_fd = server_out.get();
  spec.stderr_fd = log_fd.get();
  auto spawned = sys::spawn(spec);
  if (!spawned) throw std::runtime_error("fixture server: spawn failed: " + spawned.error().message);
  pid_ = spawned->pid;
  pidfd_ = std::move(spawned->pidfd);
  control_ = std::move(control->write_end);
  // Only the server keeps its ends: EOF on events_ then means it is gone.
  control->read_end.reset();
  server_out.reset();
  log_fd.reset();

  reader_ = std::thread([this] { reader_loop(); });

  // From here a failure must stop the server and join the reader itself:
  // the destructor does not run for a constructor that throws.
  try {
    std::optional<nlohmann::json> ready;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(options.ready_timeout_ms), [&] { return ready_ || eof_; });
      ready = ready_;
    }
    if (!ready) throw std::runtime_error("fixture server did not become ready; its log:\n" + log());
    port_ = ready->at("port").get<int>();
    if (!ready->at("ca_file").is_null()) ca_file_ = ready->at("ca_file").get<std::string>();
  } catch (...) {
    stop_process(2'000);
    throw;
  }
}

FixtureServer::~FixtureServer() { shutdown(); }

std::string FixtureServer::url(const std::string& repo_name) const {
  return std::string(plain_http_ ? "http" : "https") + "://127.0.0.1:" + std::to_string(port_) + "/" + repo_name +
         ".git";
}

std::string FixtureServer::repo_path(const std::string& repo_name) const {
  return repos_dir_ + "/" + repo_name + ".git";
}

std::string FixtureServer::create_bare_repo(const std::string& repo_name) {
  const std::string path = repo_path(repo_name);
  git_ok({"init", "-q", "--bare", "--initial-branch=main", path});
  // http-backend already allows receive-pack for an authenticated user
  // (the server sets REMOTE_USER); saying so keeps it independent of that.
  git_ok({"--git-dir", path, "config", "http.receivepack", "true"});
  return path;
}

std::string FixtureServer::log() const { return read_file(log_file_); }

void FixtureServer::reader_loop() {
  std::string buf;
  char chunk[8192];
  for (;;) {
    const ssize_t n = ::read(events_.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      const std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) continue;  // not ours: ignore
      std::lock_guard<std::mutex> lock(mu_);
      if (j.contains("event")) {
        if (j["event"] == "ready") {
          ready_ = std::move(j);
        } else {
          events_queue_.push_back(std::move(j));
        }
      } else {
        replies_.push_back(std::move(j));
      }
      cv_.notify_all();
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  eof_ = true;
  cv_.notify_all();
}

void FixtureServer::send_line(const std::string& line) {
  // A server that died must make this fail, not kill the test with SIGPIPE.
  sys::ScopedSigpipeBlock no_sigpipe;
  auto r = sys::write_all(control_.get(), line.data(), line.size());
  if (!r) throw std::runtime_error("fixture server: cannot send a command: " + r.error().message);
}

nlohmann::json FixtureServer::command(nlohmann::json cmd, long timeout_ms) {
  std::lock_guard<std::mutex> one_at_a_time(command_mu_);
  if (!control_) throw std::runtime_error("fixture server: already shut down");
  long id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_id_++;
  }
  cmd["id"] = id;
  send_line(cmd.dump() + "\n");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Replies come in command order; one left over from a command that
    // timed out is dropped here.
    while (!replies_.empty()) {
      nlohmann::json reply = std::move(replies_.front());
      replies_.pop_front();
      if (!reply.contains("id") || reply["id"] != id) continue;
      if (!reply.value("ok", false)) {
        throw std::runtime_error("fixture server refused " + cmd.dump() + ": " + reply.value("error", std::string()));
      }
      return reply;
    }
    if (eof_) throw std::runtime_error("fixture server exited before answering " + cmd.dump());
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && replies_.empty()) {
      throw std::runtime_error("fixture server did not answer " + cmd.dump());
    }
  }
}

nlohmann::json FixtureServer::match_json(const RequestMatch& match) {
  nlohmann::json j = nlohmann::json::object();
  if (match.request) j["request"] = *match.request;
  if (!match.method.empty()) j["method"] = match.method;
  if (!match.path.empty()) j["path"] = match.path;
  j["times"] = match.times;
  return j;
}

long FixtureServer::hold(const RequestMatch& match) {
  nlohmann::json cmd = match_json(match);
  cmd["cmd"] = "hold";
  return command(cmd).at("rule").get<long>();
}

std::vector<long> FixtureServer::release(std::optional<long> request) {
  nlohmann::json cmd = {{"cmd", "release"}};
  if (request) cmd["request"] = *request;
  return command(cmd).at("released").get<std::vector<long>>();
}

long FixtureServer::respond(const RequestMatch& match, int status, const std::string& location, const std::string& body,
                            const std::map<std::string, std::string>& headers) {
  nlohmann::json cmd = match_json(match);
  cmd["cmd"] = "respond";
  cmd["status"] = status;
  if (!location.empty()) cmd["location"] = location;
  if (!body.empty()) cmd["body"] = body;
  if (!headers.empty()) cmd["headers"] = headers;
  return command(cmd).at("rule").get<long>();
}

long FixtureServer::close_after_headers(const RequestMatch& match, CloseMode mode, bool run_backend) {
  nlohmann::json cmd = match_json(match);
  cmd["cmd"] = "close_after_headers";
  cmd["mode"] = mode == CloseMode::headers ? "headers" : "none";
  cmd["run_backend"] = run_backend;
  return command(cmd).at("rule").get<long>();
}

long FixtureServer::hold_response_end(const RequestMatch& match) {
  nlohmann::json cmd = match_json(match);
  cmd["cmd"] = "hold_response_end";
  return command(cmd).at("rule").get<long>();
}

Counts FixtureServer::count() {
  const nlohmann::json r = command({{"cmd", "count"}});
  Counts c;
  c.total = r.at("total").get<long>();
  for (const auto& [k, v] : r.at("counts").items()) c.by_method_path[k] = v.get<long>();
  c.peak_receive_pack = r.at("peak_receive_pack").get<long>();
  c.active_receive_pack = r.at("active_receive_pack").get<long>();
  c.held = r.at("held").get<std::vector<long>>();
  c.connections = r.at("connections").get<long>();
  c.handshake_failures = r.at("handshake_failures").get<long>();
  c.empty_connections = r.at("empty_connections").get<long>();
  return c;
}

std::vector<JournalEntry> FixtureServer::journal() {
  const nlohmann::json r = command({{"cmd", "journal"}});
  std::vector<JournalEntry> out;
  for (const auto& j : r.at("requests")) {
    JournalEntry e;
    e.request = j.at("request").get<long>();
    e.connection = j.at("connection").get<long>();
    e.method = j.at("method").get<std::string>();
    e.target = j.at("target").get<std::string>();
    e.path = j.at("path").get<std::string>();
    e.query = j.at("query").get<std::string>();
    e.version = j.at("version").get<std::string>();
    for (const auto& h : j.at("headers"))
      e.headers.emplace_back(h.at(0).get<std::string>(), h.at(1).get<std::string>());
    e.body_bytes = j.at("body_bytes").get<long long>();
    e.chunked = j.at("chunked").get<bool>();
    e.start_ns = j.at("start_ns").get<std::int64_t>();
    if (!j.at("end_ns").is_null()) e.end_ns = j.at("end_ns").get<std::int64_t>();
    if (!j.at("status").is_null()) e.status = j.at("status").get<int>();
    e.faults = j.at("faults").get<std::vector<std::string>>();
    out.push_back(std::move(e));
  }
  return out;
}

long FixtureServer::reset_faults() { return command({{"cmd", "reset_faults"}}).at("dropped").get<long>(); }

std::optional<HeldEvent> FixtureServer::wait_for_held(long timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<HeldEvent> found;
  auto take = [&] {
    for (auto it = events_queue_.begin(); it != events_queue_.end(); ++it) {
      if ((*it)["event"] != "held") continue;
      HeldEvent h;
      h.request = it->at("request").get<long>();
      h.connection = it->at("connection").get<long>();
      h.method = it->at("method").get<std::string>();
      h.path = it->at("path").get<std::string>();
      h.target = it->at("target").get<std::string>();
      events_queue_.erase(it);
      found = std::move(h);
      return true;
    }
    return eof_;
  };
  cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), take);
  return found;
}

int FixtureServer::shutdown(long timeout_ms) {
  if (stopped_) return exit_code_;
  if (control_) {
    try {
      command({{"cmd", "shutdown"}}, timeout_ms);
    } catch (const std::exception&) {
      // Dead or wedged: stop_process deals with it.
    }
  }
  stop_process(timeout_ms);
  return exit_code_;
}

void FixtureServer::stop_process(long timeout_ms) {
  if (stopped_) return;
  stopped_ = true;
  // EOF on its stdin is the server's other stop signal.
  {
    std::lock_guard<std::mutex> one_at_a_time(command_mu_);
    control_.reset();
  }
  bool killed = false;
  if (pidfd_) {
    pollfd p{pidfd_.get(), POLLIN, 0};
    int ready;
    do {
      ready = ::poll(&p, 1, static_cast<int>(timeout_ms));
    } while (ready < 0 && errno == EINTR);
    if (ready <= 0) {
      (void)sys::pidfd_signal(pidfd_.get(), SIGKILL);
      killed = true;
    }
    // The leader is now dead but unreaped, so its process group id cannot
    // be reused: anything it left in the group (a backend) is killed here.
    p.revents = 0;
    (void)::poll(&p, 1, -1);
    (void)sys::signal_group(pid_, SIGKILL);
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::milliseconds(2'000), [&] { return eof_; })) {
      ::shutdown(events_.get(), SHUT_RDWR);  // a stray holder of its stdout: stop reading anyway
    }
  }
  if (reader_.joinable()) reader_.join();
  events_.reset();
  if (pidfd_) {
    auto status = sys::reap(pidfd_.get());
    exit_code_ = killed || !status ? -1 : status->code;
    pidfd_.reset();
  }
}

}  // namespace courier::test
