// service-start.cpp — how `git-courier serve` starts and leaves its socket,
// the shipped binary run as an operator (or systemd) runs it: no warning at
// start that the operator cannot act on (X-UNIT2); the socket file removed
// on a failed start, a stale one (its service SIGKILLed) replaced, a live
// one never taken over, and nothing removed that the service did not bind
// (X-UNIT3). Every wait is on a fact: a log line, an exit, a file.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "service_support.hpp"
#include "support.hpp"
#include "sys/fd.hpp"
#include "sys/socket_file.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_service_start {

using namespace courier;
using nlohmann::json;

namespace {

// The warnings an operator can act on, by event: their own configuration
// (config_warning says which flag) and a descriptor limit that could not be
// raised (LimitNOFILE). Any other warning or error at start is noise the
// operator learns to ignore, and then misses the one that matters.
const std::set<std::string> kActionableWarnings = {"config_warning", "fd_limit"};

// A home, a repository root and a socket path for `git-courier serve`.
struct Place {
  test::TempDir dir;
  std::string root = dir.path() + "/repos";
  std::string socket = dir.path() + "/run/serve.sock";
  std::string journal = dir.path() + "/state/journal.sqlite";
  Place() { std::filesystem::create_directories(root); }
};

// `git-courier serve` on the place's socket, its log (stderr) read as lines.
std::unique_ptr<test::LineProcess> serve(const Place& p, const std::vector<std::string>& extra = {}) {
  const std::string cmd = "exec /usr/bin/env -i PATH=/usr/bin:/bin LANG=C HOME=" + p.dir.path() + " '" +
                          test::test_root_env() + "' \"$0\" serve \"$@\" 2>&1";
  std::vector<std::string> argv = {"/bin/sh", "-c",       cmd,      COURIER_BINARY, "--repo-root",
                                   p.root,    "--socket", p.socket, "--journal",    p.journal};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<test::LineProcess>(argv);
}

std::string log_of(test::LineProcess& proc) {
  std::string out;
  for (const auto& l : proc.lines()) out += l + "\n";
  return out;
}

// The first log line whose event is one of `events`, waiting for it up to
// timeout_ms; null if none came.
json first_event(test::LineProcess& proc, const std::set<std::string>& events, long timeout_ms) {
  json found;
  test::wait_for_fact(
      [&] {
        for (const auto& line : proc.lines()) {
          json j = json::parse(line, nullptr, false);
          if (j.is_object() && events.count(j.value("event", "")) != 0) {
            found = j;
            return true;
          }
        }
        return false;
      },
      timeout_ms, 10'000);
  return found;
}

// The exit code of a start that must end by itself: waited for up to 30 s
// (a start that came up instead is stopped, and its code is then -1).
int exit_of(test::LineProcess& proc) {
  if (!test::gone_within(proc.pid(), 30'000)) {
    proc.kill_hard();
    proc.wait_exit();
    return -1;
  }
  return proc.wait_exit();
}

// The socket file's inode, or 0 when nothing (or no socket) is at `path`.
ino_t socket_inode(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return 0;
  return st.st_ino;
}

// Files the service left in the socket's directory besides the socket and
// its lock (a temporary name it bound under, say).
std::vector<std::string> strays_beside(const std::string& socket) {
  std::vector<std::string> out;
  const auto dir = std::filesystem::path(socket).parent_path();
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (name != "serve.sock" && name != "serve.sock.lock") out.push_back(name);
  }
  return out;
}

// A TCP socket of this test listening on a loopback port: the port a
// service's --listen then cannot take.
struct TakenPort {
  sys::ScopedFd fd{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  int port = 0;
  TakenPort() {
    REQUIRE(fd.valid());
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd.get(), 4) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
  }
};

// A Unix socket of this test listening at `path`.
sys::ScopedFd listen_unix(const std::string& path) {
  sys::ScopedFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(fd.valid());
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof a.sun_path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  REQUIRE(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(fd.get(), 4) == 0);
  return fd;
}

// A bearer token file for --api-token-file.
std::string token_file(const Place& p) {
  const std::string path = p.dir.path() + "/api-token";
  test::write_file(path, "start-token-0123456789abcdef\n");
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  return path;
}

}  // namespace

TEST_SUITE("service-start") {
  TEST_CASE(
      "X-UNIT2: a service started with --listen, asked once on each listener and stopped, logs no warning the "
      "operator cannot act on") {
    Place p;
    const std::string token = token_file(p);
    auto proc = serve(p, {"--listen", "127.0.0.1:0", "--api-token-file", token});
    const json up = first_event(*proc, {"listening", "config_error", "http_failed"}, 30'000);
    REQUIRE_MESSAGE(up.value("event", "") == "listening", log_of(*proc));
    std::int64_t port = 0;
    for (const auto& line : proc->lines()) {
      const json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.value("event", "") == "tcp_listening") port = j.value("port", 0);
    }
    REQUIRE_MESSAGE(port > 0, log_of(*proc));
    CHECK(test::curl(p.socket, "GET", "/healthz").status == 200);
    CHECK(test::curl_tcp(port, "GET", "/healthz", "start-token-0123456789abcdef").status == 200);
    ::kill(proc->pid(), SIGTERM);
    CHECK(proc->wait_exit() == 0);
    std::vector<std::string> noise;
    for (const auto& line : proc->lines()) {
      const json j = json::parse(line, nullptr, false);
      REQUIRE_MESSAGE(j.is_object(), "a log line that is not a JSON object: " << line);
      const std::string level = j.value("level", "");
      if (level != "info" && kActionableWarnings.count(j.value("event", "")) == 0) noise.push_back(line);
    }
    std::string said;
    for (const auto& n : noise) said += n + "\n";
    CHECK_MESSAGE(noise.empty(), "the service logged a warning the operator cannot act on:\n" << said);
  }

  TEST_CASE(
      "X-UNIT3: a start whose --listen port is taken exits 2 naming the port and leaves no socket file; the next "
      "start on that socket comes up") {
    Place p;
    const std::string token = token_file(p);
    TakenPort taken;
    const std::string listen = "127.0.0.1:" + std::to_string(taken.port);
    auto failed = serve(p, {"--listen", listen, "--api-token-file", token});
    const int code = exit_of(*failed);
    const std::string log = log_of(*failed);
    CHECK_MESSAGE(code == 2, log);
    CHECK_MESSAGE(log.find("cannot bind " + listen) != std::string::npos, log);
    // The Unix socket was bound before --listen was tried (the log shows no
    // refusal of it): the failed start must have removed it.
    CHECK_MESSAGE(std::filesystem::exists(p.socket + ".lock"), "the Unix socket's lock was never taken:\n" << log);
    CHECK_MESSAGE(!std::filesystem::exists(std::filesystem::symlink_status(p.socket)),
                  "the socket file was left behind after a failed start: " << p.socket);
    CHECK_MESSAGE(strays_beside(p.socket).empty(), "a failed start left files beside its socket");
    auto next = serve(p);
    const json up = first_event(*next, {"listening", "config_error", "http_failed"}, 30'000);
    CHECK_MESSAGE(up.value("event", "") == "listening", log_of(*next));
    CHECK(test::curl(p.socket, "GET", "/healthz").status == 200);
    ::kill(next->pid(), SIGTERM);
    CHECK(next->wait_exit() == 0);
    CHECK_MESSAGE(!std::filesystem::exists(std::filesystem::symlink_status(p.socket)),
                  "the socket file was left behind after a clean stop");
  }

  TEST_CASE(
      "X-UNIT3: the socket a SIGKILLed service left is found stale (nobody answers) and replaced: the next start on "
      "the same path comes up and answers") {
    Place p;
    auto first = serve(p);
    REQUIRE_MESSAGE(first_event(*first, {"listening"}, 30'000).is_object(), log_of(*first));
    first->kill_hard();
    first->wait_exit();
    const ino_t left = socket_inode(p.socket);
    REQUIRE_MESSAGE(left != 0, "the SIGKILLed service left no socket file: nothing to prove");
    auto second = serve(p);
    const json up = first_event(*second, {"listening", "config_error", "http_failed"}, 30'000);
    REQUIRE_MESSAGE(up.value("event", "") == "listening", "a start after a SIGKILLed service did not come up:\n"
                                                              << log_of(*second));
    CHECK(socket_inode(p.socket) != left);
    CHECK(test::curl(p.socket, "GET", "/healthz").status == 200);
    CHECK_MESSAGE(strays_beside(p.socket).empty(), "the replacement left files beside the socket");
    ::kill(second->pid(), SIGTERM);
    CHECK(second->wait_exit() == 0);
  }

  TEST_CASE(
      "X-UNIT3: a live service is never taken over: a second start on its socket exits 2 naming the first's pid, "
      "by its lock or, with its lock file gone, because it answers; the first still answers") {
    Place p;
    auto first = serve(p);
    REQUIRE_MESSAGE(first_event(*first, {"listening"}, 30'000).is_object(), log_of(*first));
    const ino_t bound = socket_inode(p.socket);
    REQUIRE(bound != 0);
    const std::string pid = std::to_string(first->pid());
    auto locked_out = serve(p);
    CHECK(exit_of(*locked_out) == 2);
    const std::string locked_log = log_of(*locked_out);
    CHECK_MESSAGE(locked_log.find("another git-courier serve (pid " + pid + ") holds") != std::string::npos,
                  locked_log);
    // The lock file removed (an operator cleaning the directory): the lock
    // no longer tells; the socket itself still does.
    REQUIRE(::unlink((p.socket + ".lock").c_str()) == 0);
    auto second = serve(p);
    const json said = first_event(*second, {"listening", "config_error", "http_failed"}, 30'000);
    CHECK_MESSAGE(said.value("event", "") == "config_error", "a second service took over the socket of a live one:\n"
                                                                 << log_of(*second));
    CHECK_MESSAGE(said.value("message", "").find("(pid " + pid + ") answers on " + p.socket) != std::string::npos,
                  said.dump());
    if (said.value("event", "") == "listening") second->kill_hard();  // it took the socket: no wait for its exit
    CHECK(exit_of(*second) == 2);
    CHECK(socket_inode(p.socket) == bound);
    CHECK(test::curl(p.socket, "GET", "/healthz").status == 200);
    ::kill(first->pid(), SIGTERM);
    CHECK(first->wait_exit() == 0);
  }

  TEST_CASE(
      "X-UNIT3 H1: at the socket's path a symbolic link (to a stale socket), a regular file or another user's socket "
      "is refused and left as it was") {
    Place p;
    std::filesystem::create_directories(p.dir.path() + "/run");
    REQUIRE(::chmod((p.dir.path() + "/run").c_str(), 0750) == 0);
    const std::string target = p.dir.path() + "/elsewhere.sock";
    { const sys::ScopedFd closed = listen_unix(target); }  // bound, then closed: stale
    REQUIRE(socket_inode(target) != 0);
    REQUIRE(::symlink(target.c_str(), p.socket.c_str()) == 0);
    auto linked = serve(p);
    CHECK(exit_of(*linked) == 2);
    CHECK_MESSAGE(log_of(*linked).find("exists and is not a socket") != std::string::npos, log_of(*linked));
    CHECK_MESSAGE(std::filesystem::is_symlink(p.socket), "the symbolic link at the socket's path was replaced");
    CHECK_MESSAGE(socket_inode(target) != 0, "the socket the link names was removed");
    REQUIRE(::unlink(p.socket.c_str()) == 0);
    test::write_file(p.socket, "an operator's file\n");
    auto file = serve(p);
    CHECK(exit_of(*file) == 2);
    CHECK(test::read_file(p.socket) == "an operator's file\n");
    REQUIRE(::unlink(p.socket.c_str()) == 0);
    if (::geteuid() == 0) {
      // A stale socket of another user (nobody): never taken for ours.
      { const sys::ScopedFd closed = listen_unix(p.socket); }
      REQUIRE(::lchown(p.socket.c_str(), 65534, 65534) == 0);
      auto foreign = serve(p);
      CHECK(exit_of(*foreign) == 2);
      CHECK_MESSAGE(log_of(*foreign).find("not this user's") != std::string::npos, log_of(*foreign));
      CHECK(socket_inode(p.socket) != 0);
    }
  }

  TEST_CASE(
      "X-UNIT3 H1: a socket path that changes between its check and the swap is refused and left as it was: a stale "
      "socket replaced meanwhile is put back, a free name taken meanwhile is not overwritten") {
    // The race, forced: the check (find_stale_socket) and the swap
    // (place_socket) are called here with the path changed between them, as
    // a process of the same user could change it.
    test::TempDir t;
    const std::string dir_path = t.path() + "/run";
    std::filesystem::create_directories(dir_path);
    const std::string path = dir_path + "/serve.sock";
    const sys::ScopedFd dir(::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(dir.valid());
    { const sys::ScopedFd closed = listen_unix(path); }
    auto stale = sys::find_stale_socket(dir.get(), "serve.sock", path);
    REQUIRE_MESSAGE(stale.has_value(), stale.error().message);
    REQUIRE(stale->has_value());
    // Replaced meanwhile by another stale socket: not the one checked.
    REQUIRE(::unlink(path.c_str()) == 0);
    { const sys::ScopedFd closed = listen_unix(path); }
    const ino_t other = socket_inode(path);
    REQUIRE(other != 0);
    {
      sys::ScopedFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      auto placed = sys::place_socket(dir.get(), "serve.sock", sock.get(), 4, *stale, path);
      CHECK_FALSE(placed.has_value());
      CHECK_MESSAGE(socket_inode(path) == other, "a socket the service never checked was swapped out and removed");
    }
    // A free name taken meanwhile.
    REQUIRE(::unlink(path.c_str()) == 0);
    test::write_file(path, "taken meanwhile\n");
    {
      sys::ScopedFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      auto placed = sys::place_socket(dir.get(), "serve.sock", sock.get(), 4, std::nullopt, path);
      CHECK_FALSE(placed.has_value());
      CHECK_MESSAGE(test::read_file(path) == "taken meanwhile\n",
                    "a file put at a free name meanwhile was overwritten");
    }
    CHECK_MESSAGE(strays_beside(path).empty(), "a refused swap left its temporary socket behind");
  }

  TEST_CASE(
      "X-UNIT3: a service removes only the socket it bound: a socket another process put at its path survives the "
      "service's stop") {
    Place p;
    auto svc = serve(p);
    REQUIRE_MESSAGE(first_event(*svc, {"listening"}, 30'000).is_object(), log_of(*svc));
    REQUIRE(::unlink(p.socket.c_str()) == 0);
    const sys::ScopedFd other = listen_unix(p.socket);
    const ino_t others = socket_inode(p.socket);
    REQUIRE(others != 0);
    ::kill(svc->pid(), SIGTERM);
    CHECK(svc->wait_exit() == 0);
    CHECK_MESSAGE(socket_inode(p.socket) == others, "the service removed a socket it did not bind");
    ::unlink(p.socket.c_str());
  }
}

}  // namespace integration_service_start
