// service_support.hpp — what the service's tests share: a request with curl
// (over the Unix socket, or over loopback TCP with a bearer token), NDJSON
// lines, waits bounded by facts, and a `git-courier serve` process started on
// a given state directory (so that a second one can be started on the same
// journal after the first was killed).
#pragma once

#include <algorithm>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <doctest/doctest.h>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fixture_server.hpp"
#include "journal/journal.hpp"
#include "support.hpp"
#include "sys/clock.hpp"
#include "sys/events.hpp"
#include "sys/spawn.hpp"

namespace courier::test {

struct Http {
  int status = 0;
  std::string headers;
  nlohmann::json body;
  std::string raw;
};

// curl's `-i` output as a status, headers and a JSON body.
inline Http parse_http(const std::string& out) {
  Http h;
  const auto split = out.find("\r\n\r\n");
  h.headers = out.substr(0, split);
  h.raw = split == std::string::npos ? std::string() : out.substr(split + 4);
  if (h.headers.size() > 12) h.status = std::atoi(h.headers.substr(9, 3).c_str());
  h.body = nlohmann::json::parse(h.raw, nullptr, false);
  return h;
}

// One request with curl over the socket; `as` prefixes the command (e.g.
// setpriv, to call as another user).
inline Http curl(const std::string& socket, const std::string& method, const std::string& path,
                 const std::string& body = {}, const std::vector<std::string>& as = {}) {
  std::vector<std::string> argv = as;
  for (const char* a : {"/usr/bin/curl", "-sS", "-i", "--max-time", "120", "--unix-socket"}) argv.emplace_back(a);
  argv.insert(argv.end(), {socket, "-X", method});
  if (!body.empty()) argv.insert(argv.end(), {"-H", "Content-Type: application/json", "--data-binary", "@-"});
  argv.push_back("http://courier" + path);
  return parse_http(run(argv, body, Stdin::bytes, cli_env()).out);
}

// One request with curl over loopback TCP, with `Authorization: Bearer
// bearer` unless it is empty.
inline Http curl_tcp(std::int64_t port, const std::string& method, const std::string& path, const std::string& bearer,
                     const std::string& body = {}) {
  std::vector<std::string> argv = {"/usr/bin/curl", "-sS", "-i", "--max-time", "120", "-X", method};
  if (!bearer.empty()) argv.insert(argv.end(), {"-H", "Authorization: Bearer " + bearer});
  if (!body.empty()) argv.insert(argv.end(), {"-H", "Content-Type: application/json", "--data-binary", "@-"});
  argv.push_back("http://127.0.0.1:" + std::to_string(port) + path);
  return parse_http(run(argv, body, Stdin::bytes, cli_env()).out);
}

// Polls a fact until it holds or timeout_ms passes: a bounded wait on a
// fact, never a sleep taken as proof.
template <class Fact>
bool wait_for_fact(Fact fact, long timeout_ms, long pace_us = 5'000) {
  const auto until = sys::mono_now_ns() + timeout_ms * sys::kNsPerMs;
  for (;;) {
    if (fact()) return true;
    if (sys::mono_now_ns() >= until) return false;
    ::usleep(static_cast<useconds_t>(pace_us));
  }
}

// Waits (bounded) until the process is gone: its pidfd, never a clock.
inline bool gone_within(std::int64_t pid, long timeout_ms) {
  auto fd = sys::pidfd_open(static_cast<pid_t>(pid));
  if (!fd) return true;
  auto ready = sys::wait_readable_until({fd->get()}, sys::mono_now_ns() + timeout_ms * sys::kNsPerMs);
  return ready && !ready->empty();
}

// The lines of an NDJSON body, parsed.
inline std::vector<nlohmann::json> lines_of(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto nl = text.find('\n', at);
    const std::string line = text.substr(at, nl - at);
    if (!line.empty()) out.push_back(nlohmann::json::parse(line, nullptr, false));
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return out;
}

// `git-courier serve` on <state>/run/serve.sock with the journal
// <state>/journal/journal.sqlite and the default lane directory (under the
// suite's test root, as every push's), its log (stderr) read as lines.
// Started: it has logged "listening" (the fact that its socket answers).
class ServeProcess {
 public:
  // `shell` is run by the shell before the service (e.g. a ulimit).
  ServeProcess(const std::string& state, const std::string& repo_root, const std::vector<std::string>& extra,
               const std::string& shell = {})
      : socket_(state + "/run/serve.sock"), journal_(state + "/journal/journal.sqlite") {
    const std::string cmd = shell + "exec /usr/bin/env -i PATH=/usr/bin:/bin LANG=C HOME=" + state + " '" +
                            test_root_env() + "' \"$0\" serve \"$@\" 2>&1";
    std::vector<std::string> argv = {"/bin/sh",     "-c",      cmd,        COURIER_BINARY,
                                     "--repo-root", repo_root, "--socket", socket_};
    // A service given a state URL keeps its journal there instead.
    if (std::find(extra.begin(), extra.end(), "--state") == extra.end()) {
      argv.insert(argv.end(), {"--journal", journal_});
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    proc_ = std::make_unique<LineProcess>(argv);
    up_ = !proc_->wait_line("{\"event\":\"listening\"", 30'000).empty();
  }
  ~ServeProcess() {
    if (!exited_) {
      ::kill(proc_->pid(), SIGTERM);
      proc_->wait_exit();
    }
  }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  bool up() const { return up_; }
  int pid() const { return proc_->pid(); }
  const std::string& socket() const { return socket_; }
  const std::string& journal() const { return journal_; }
  std::string log() const {
    std::string out;
    for (const auto& l : proc_->lines()) out += l + "\n";
    return out;
  }
  // The first log line that starts with `prefix` (waiting up to timeout_ms).
  std::string wait_log(const std::string& prefix, long timeout_ms) { return proc_->wait_line(prefix, timeout_ms); }
  // SIGTERM, then the exit code.
  int stop() {
    ::kill(proc_->pid(), SIGTERM);
    exited_ = true;
    return proc_->wait_exit();
  }
  // SIGKILL: a crash.
  void crash() {
    proc_->kill_hard();
    proc_->wait_exit();
    exited_ = true;
  }
  Http post(const nlohmann::json& body) const { return curl(socket_, "POST", "/v1/deliveries", body.dump()); }
  Http get(const std::string& path) const { return curl(socket_, "GET", path); }
  // The whole event stream of a delivery (it ends after `finished`).
  std::vector<nlohmann::json> events(const std::string& id) const {
    return lines_of(curl(socket_, "GET", "/v1/deliveries/" + id + "/events").raw);
  }

 private:
  std::string socket_;
  std::string journal_;
  std::unique_ptr<LineProcess> proc_;
  bool up_ = false;
  bool exited_ = false;
};

// The most requests to one path in flight at once, by the server's log.
inline std::map<std::string, long> peak_in_flight(const std::vector<JournalEntry>& log, const std::string& method) {
  std::map<std::string, std::vector<std::pair<std::int64_t, int>>> edges;
  for (const auto& e : log) {
    if (e.method != method) continue;
    edges[e.path].emplace_back(e.start_ns, +1);
    edges[e.path].emplace_back(e.end_ns.value_or(INT64_MAX), -1);
  }
  std::map<std::string, long> out;
  for (auto& [path, ev] : edges) {
    std::sort(ev.begin(), ev.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second < b.second;
    });
    long live = 0, peak = 0;
    for (const auto& [at, d] : ev) peak = std::max(peak, live += d);
    out[path] = peak;
  }
  return out;
}

// How many refs the bare repositories `names` of the fixture server hold
// (each one read back with git).
inline long refs_on(const FixtureServer& fx, const std::vector<std::string>& names) {
  long refs = 0;
  for (const auto& name : names) {
    auto r = git({"--git-dir", fx.repo_path(name), "for-each-ref", "--format=%(objectname)"});
    if (!r.ok()) return -1;
    refs += std::count(r.out.begin(), r.out.end(), '\n');
  }
  return refs;
}

// The CLI's or the service's command line under a clean environment:
// cli_env() and no git configuration of the machine or the user.
inline std::vector<std::string> clean_env_argv(const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"/usr/bin/env", "-i"};
  for (const auto& e : cli_env()) out.push_back(e);
  for (const auto& e : {"HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}) out.push_back(e);
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

// A delivery as the SQLite journal at `path` records it (nullopt: never submitted).
inline std::optional<journal::Record> journalled(const std::string& path, const std::string& id) {
  auto j = journal::open_sqlite(path);
  REQUIRE_MESSAGE(j.has_value(), (j ? "" : j.error().message));
  auto r = (*j)->find(id);
  REQUIRE(r.has_value());
  return *r;
}

// The pid of the child a journalled delivery's latest dispatch names (0: none).
inline std::int64_t dispatched_child_pid(const journal::Record& r) {
  auto d = r.last(journal::Step::dispatched);
  return d ? std::atoll(journal::detail_text(d->detail, "child_pid").c_str()) : 0;
}

// A service's surroundings: a state directory, a repository root holding
// `source` (three commits, `tip`), and a fixture server with the bare
// repository "r" to deliver to.
struct ServiceScene {
  TempDir dir;
  FixtureServer fx;
  std::string state;
  std::string root;
  std::string source;
  std::string tip;

  ServiceScene() {
    state = dir.path() + "/state";
    root = dir.path() + "/repos";
    std::filesystem::create_directories(root);
    source = root + "/source";
    tip = make_source_repo(source, 3);
    fx.create_bare_repo("r");
  }
  // `git-courier serve` here, two workers, trusting the fixture's CA; started.
  std::unique_ptr<ServeProcess> start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--workers", "2", "--ca-file", fx.ca_file()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto s = std::make_unique<ServeProcess>(state, root, args);
    REQUIRE_MESSAGE(s->up(), "the service did not start listening:\n" << s->log());
    return s;
  }
};

}  // namespace courier::test
