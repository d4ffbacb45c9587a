// nginx_server.cpp — the test-side handle on fixtures/git-server, and the
// runner for scripts/gen-repo, declared in nginx_server.hpp.
#include "nginx_server.hpp"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "fixture_server.hpp"
#include "sys/clock.hpp"
#include "sys/events.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"
#include "support.hpp"

namespace courier::test {

namespace {

// What the script returns from `start` when nginx or fcgiwrap is missing.
constexpr int kUnavailable = 3;

const std::string kScript = COURIER_GIT_SERVER_SCRIPT;

// scripts/gen-repo is a script of the tree, not a fixture beside the server.
std::string gen_repo_script() { return source_path("scripts/gen-repo"); }

// The scripts' environment: git_env() (no machine or user git configuration)
// plus /usr/sbin, where Debian puts nginx and fcgiwrap; a pyenv's settings so
// python3 resolves; and the script's own knobs when the caller set them.
std::vector<std::string> script_env() {
  const char* path = std::getenv("PATH");
  std::vector<std::string> extra = {"PATH=" + std::string(path && *path ? path : "/usr/bin:/bin") + ":/usr/sbin:/sbin"};
  for (const char* name : {"PYENV_ROOT", "PYENV_VERSION", "COURIER_GIT_SERVER_PORT", "COURIER_GIT_SERVER_CGI_WORKERS",
                           "COURIER_GIT_SERVER_STOP_TIMEOUT", "COURIER_NGINX", "COURIER_FCGIWRAP"}) {
    if (const char* v = std::getenv(name)) extra.push_back(std::string(name) + "=" + v);
  }
  return git_env(extra);
}

RunResult run_script(const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {script};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {}, Stdin::bytes, script_env());
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// KEY=VALUE words of the first line of `out` that starts with `prefix`.
std::map<std::string, std::string> parse_line(const std::string& out, const std::string& prefix) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::map<std::string, std::string> fields;
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
    }
    return fields;
  }
  return {};
}

std::string field(const std::map<std::string, std::string>& fields, const std::string& key, const std::string& out) {
  const auto it = fields.find(key);
  if (it == fields.end() || it->second.empty()) {
    throw std::runtime_error("no " + key + "= in the script's output: " + out);
  }
  return it->second;
}

// Members of process group `pgid` that still run (zombies excluded: the
// daemons are reparented to init, which reaps them on its own schedule).
std::vector<pid_t> running_in_group(pid_t pgid) {
  std::vector<pid_t> out;
  if (pgid <= 0) return out;
  for (pid_t pid : sys::pids_in_group(pgid)) {
    const char state = sys::proc_state(pid);
    if (state != 0 && state != 'Z') out.push_back(pid);
  }
  return out;
}

}  // namespace

NginxServer::NginxServer() {
  state_dir_ = dir_.path() + "/server";
  scratch_dir_ = dir_.path() + "/scratch";
  std::filesystem::create_directories(scratch_dir_);

  const RunResult started = run_script(kScript, {"start", state_dir_});
  if (started.exit_code == kUnavailable) {
    unavailable_reason_ = trimmed(started.err);
    const std::string prefix = "git-server: unavailable: ";
    if (unavailable_reason_.rfind(prefix, 0) == 0) unavailable_reason_.erase(0, prefix.size());
    stopped_ = true;
    return;
  }
  // From here a failure must not leave daemons behind: the destructor does
  // not run for a constructor that throws.
  try {
    if (started.exit_code != 0) {
      throw std::runtime_error("git-server start failed (" + std::to_string(started.exit_code) + "): " + started.err +
                               "\nlogs:\n" + log());
    }
    const auto fields = parse_line(started.out, "port=");
    port_ = std::stoi(field(fields, "port", started.out));
    ca_file_ = field(fields, "ca_file", started.out);
    url_base_ = field(fields, "url_base", started.out);

    const RunResult status = run_script(kScript, {"status", state_dir_});
    if (status.exit_code != 0) throw std::runtime_error("git-server status after start: " + status.out + status.err);
    const auto pids = parse_line(status.out, "port=");
    nginx_pid_ = static_cast<pid_t>(std::stol(field(pids, "nginx_pid", status.out)));
    fcgiwrap_pid_ = static_cast<pid_t>(std::stol(field(pids, "fcgiwrap_pid", status.out)));
    available_ = true;
  } catch (...) {
    stop();
    throw;
  }
}

NginxServer::~NginxServer() { stop(); }

std::string NginxServer::url(const std::string& repo_name) const { return url_base_ + "/" + repo_name + ".git"; }

std::string NginxServer::repo_path(const std::string& repo_name) const {
  return state_dir_ + "/repos/" + repo_name + ".git";
}

std::string NginxServer::create_bare_repo(const std::string& repo_name) {
  const RunResult r = run_script(kScript, {"create-repo", state_dir_, repo_name});
  if (r.exit_code != 0) throw std::runtime_error("git-server create-repo " + repo_name + " failed: " + r.err);
  return trimmed(r.out);
}

std::vector<pid_t> NginxServer::pids() const {
  std::vector<pid_t> out = running_in_group(nginx_pid_);
  for (pid_t p : running_in_group(fcgiwrap_pid_)) out.push_back(p);
  return out;
}

std::string NginxServer::log() const {
  return "--- nginx error.log\n" + read_file(state_dir_ + "/logs/error.log") + "--- fcgiwrap.log\n" +
         read_file(state_dir_ + "/logs/fcgiwrap.log");
}

bool NginxServer::stop() {
  if (stopped_) return true;
  stopped_ = true;
  bool clean = false;
  try {
    clean = run_script(kScript, {"stop", state_dir_}).exit_code == 0;
  } catch (const std::exception&) {
    // Could not even run it: the fallback below still applies.
  }
  // The script waited for the groups to empty; anything still running means
  // it failed, so kill the groups and wait (bounded) until they are empty.
  for (pid_t leader : {nginx_pid_, fcgiwrap_pid_}) {
    if (running_in_group(leader).empty()) continue;
    clean = false;
    (void)sys::signal_group(leader, SIGKILL);
    // Wait for each member's exit on its pidfd (an event, not a clock).
    const sys::MonoNs until = sys::mono_now_ns() + 10'000 * sys::kNsPerMs;
    for (pid_t member : running_in_group(leader)) {
      if (auto fd = sys::pidfd_open(member)) (void)sys::wait_readable_until({fd->get()}, until);
    }
  }
  return clean;
}

RunResult run_git_server(const std::vector<std::string>& args) { return run_script(kScript, args); }

GeneratedRepo generate_repo(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> all = {dir};
  all.insert(all.end(), args.begin(), args.end());
  const RunResult r = run_script(gen_repo_script(), all);
  if (r.exit_code != 0) throw std::runtime_error("gen-repo failed (" + std::to_string(r.exit_code) + "): " + r.err);
  const auto fields = parse_line(r.out, "objects=");
  GeneratedRepo g;
  g.objects = std::stol(field(fields, "objects", r.out));
  g.commits = std::stol(field(fields, "commits", r.out));
  g.head = field(fields, "head", r.out);
  g.dir = field(fields, "dir", r.out);
  return g;
}

}  // namespace courier::test
