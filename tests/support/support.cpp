// support.cpp — test helpers.
#include "support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "sys/state_paths.hpp"

namespace courier::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/courier-test-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

// One stable string per name asked for: the callers keep the pointer.
const char* interned(const std::string& value) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<std::string>> seen;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = seen[value];
  if (!slot) slot = std::make_unique<std::string>(value);
  return slot->c_str();
}

}  // namespace

const char* built_program(const char* name) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot read /proc/self/exe: " + ec.message());
  return interned((self.parent_path() / name).string());
}

const char* source_path(const char* relative) { return interned(std::string(COURIER_SOURCE_DIR) + "/" + relative); }

std::string raw_frame(const std::string& body) {
  const auto n = static_cast<std::uint32_t>(body.size());
  std::string out;
  out.push_back(static_cast<char>(n >> 24));
  out.push_back(static_cast<char>((n >> 16) & 0xFF));
  out.push_back(static_cast<char>((n >> 8) & 0xFF));
  out.push_back(static_cast<char>(n & 0xFF));
  return out + body;
}

RunResult run(const std::vector<std::string>& argv, const std::string& input, Stdin mode,
              const std::vector<std::string>& env) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) || ::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC)) {
    throw std::runtime_error("pipe2 failed");
  }
  int tty_master = -1;
  std::string tty_name;
  if (mode == Stdin::tty) {
    tty_master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (tty_master < 0 || ::grantpt(tty_master) || ::unlockpt(tty_master)) throw std::runtime_error("openpt");
    tty_name = ::ptsname(tty_master);
  }
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  // The suite's test root (tests/support/main.cpp) reaches every git-courier
  // command a test runs, so its default journal and lanes stay inside the
  // run. (Not the delivery child run by hand: its environment is what a
  // test checks.)
  std::string state;
  const bool has_state = std::any_of(env.begin(), env.end(), [](const std::string& e) {
    return e.rfind(std::string(sys::kTestRootVariable) + "=", 0) == 0;
  });
  const bool command = argv.size() > 1 && argv[1].rfind("__", 0) != 0;
  if (!has_state && command && !test_root_env().empty()) {
    state = test_root_env();
    cenv.push_back(state.data());
  }
  cenv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    int in_fd = in_pipe[0];
    if (mode == Stdin::tty) in_fd = ::open(tty_name.c_str(), O_RDWR | O_NOCTTY);
    ::dup2(in_fd, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execve(cargv[0], cargv.data(), cenv.data());
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  RunResult r;
  std::size_t written = 0;
  int in_fd = in_pipe[1];
  if (input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  } else {
    ::fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    pollfd fds[3] = {
        {out_open ? out_pipe[0] : -1, POLLIN, 0}, {err_open ? err_pipe[0] : -1, POLLIN, 0}, {in_fd, POLLOUT, 0}};
    ::poll(fds, 3, -1);
    char buf[65536];
    if (fds[0].revents) {
      const ssize_t n = ::read(out_pipe[0], buf, sizeof buf);
      if (n <= 0)
        out_open = false;
      else
        r.out.append(buf, static_cast<std::size_t>(n));
    }
    if (fds[1].revents) {
      const ssize_t n = ::read(err_pipe[0], buf, sizeof buf);
      if (n <= 0)
        err_open = false;
      else
        r.err.append(buf, static_cast<std::size_t>(n));
    }
    if (in_fd >= 0 && fds[2].revents) {
      const ssize_t n = ::write(in_fd, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 || written == input.size()) {
        ::close(in_fd);
        in_fd = -1;
      }
    }
  }
  if (in_fd >= 0) ::close(in_fd);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (tty_master >= 0) ::close(tty_master);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace courier::test

#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>

#include "sys/io.hpp"

namespace courier::test {

namespace {
const std::vector<int> g_initial_fds = sys::open_fds();
}

const std::vector<int>& initial_fds() { return g_initial_fds; }

void report(const std::string& test, const std::string& figure, double value, const std::string& unit) {
  char line[512];
  std::snprintf(line, sizeof line, "measured: %s: %s = %.3f %s\n", test.c_str(), figure.c_str(), value, unit.c_str());
  std::fputs(line, stdout);
  std::fflush(stdout);
  if (const char* path = std::getenv("COURIER_MEASUREMENTS")) {
    std::ofstream(path, std::ios::app) << line;
  }
}

Tmpfs::Tmpfs(std::string dir, const std::string& size) : path(std::move(dir)) {
  if (::geteuid() != 0) {
    why = "mounting a tmpfs needs root";
    return;
  }
  if (::mkdir(path.c_str(), 0700) != 0) throw std::runtime_error("mkdir " + path + ": " + std::strerror(errno));
  const RunResult r = run({"/bin/mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0700", "tmpfs", path});
  if (r.exit_code != 0) {
    why = "cannot mount a tmpfs here: " + r.err;
    return;
  }
  mounted = true;
}

Tmpfs::~Tmpfs() {
  if (mounted) (void)run({"/bin/umount", path});
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

struct Latch::State {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
};

Latch::Latch() : state_(std::make_shared<State>()) {}

void Latch::open() const {
  State* s = state_.get();
  std::lock_guard<std::mutex> lock(s->mu);
  s->open = true;
  s->cv.notify_all();
}

bool Latch::wait(long timeout_ms) const {
  State* s = state_.get();
  std::unique_lock<std::mutex> lock(s->mu);
  return s->cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return s->open; });
}

bool Latch::is_open() const {
  State* s = state_.get();
  std::lock_guard<std::mutex> lock(s->mu);
  return s->open;
}

}  // namespace courier::test

#include <signal.h>
#include <thread>

namespace courier::test {

struct LineProcess::State {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> lines;
  bool eof = false;
  std::thread reader;
};

LineProcess::LineProcess(const std::vector<std::string>& argv) : state_(std::make_shared<State>()) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(out[1], 1);
    const int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  const int fd = out[0];
  state_->reader = std::thread([s = state_, fd] {
    std::string buf;
    char chunk[4096];
    for (;;) {
      const ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n <= 0) break;
      buf.append(chunk, static_cast<std::size_t>(n));
      std::size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        std::lock_guard<std::mutex> lock(s->mu);
        s->lines.push_back(buf.substr(0, nl));
        buf.erase(0, nl + 1);
        s->cv.notify_all();
      }
    }
    ::close(fd);
    std::lock_guard<std::mutex> lock(s->mu);
    s->eof = true;
    s->cv.notify_all();
  });
}

std::string LineProcess::wait_line(const std::string& prefix, long timeout_ms) {
  std::unique_lock<std::mutex> lock(state_->mu);
  std::string found;
  state_->cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    for (const auto& l : state_->lines) {
      if (l.rfind(prefix, 0) == 0) {
        found = l;
        return true;
      }
    }
    return state_->eof;
  });
  return found;
}

std::vector<std::string> LineProcess::lines() {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->lines;
}

void LineProcess::kill_hard() {
  if (!reaped_) ::kill(pid_, SIGKILL);
}

int LineProcess::wait_exit() {
  int status = 0;
  if (!reaped_) {
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
  }
  if (state_->reader.joinable()) state_->reader.join();
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

LineProcess::~LineProcess() {
  kill_hard();
  wait_exit();
}

}  // namespace courier::test

#include <filesystem>
#include <sstream>

namespace courier::test {

std::vector<ProcInfo> processes() {
  std::vector<ProcInfo> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    ProcInfo p;
    p.pid = std::stoi(name);
    rest >> p.state >> p.ppid;
    std::error_code link_ec;
    p.exe = std::filesystem::read_symlink(e.path() / "exe", link_ec).string();
    out.push_back(p);
  }
  return out;
}

std::vector<int> children_of_self() {
  std::vector<int> out;
  const int self = static_cast<int>(::getpid());
  for (const auto& p : processes()) {
    if (p.ppid == self) out.push_back(p.pid);
  }
  return out;
}

}  // namespace courier::test

namespace courier::test {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string test_root_env() {
  const char* root = std::getenv(sys::kTestRootVariable);
  return root && *root ? std::string(sys::kTestRootVariable) + "=" + root : std::string();
}

std::vector<std::string> cli_env() {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "LANG=C"};
  if (const char* tmp = std::getenv("TMPDIR")) env.push_back(std::string("TMPDIR=") + tmp);
  return env;
}

}  // namespace courier::test

namespace courier::test {

int free_loopback_port(const std::string& who) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) throw std::runtime_error(who + ": socket failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(s);
  if (port == 0) throw std::runtime_error(who + ": no free port");
  return port;
}

}  // namespace courier::test
