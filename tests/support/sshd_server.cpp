// sshd_server.cpp — the test sshd, declared in sshd_server.hpp: its own
// sshd_config, host key and authorized_keys in the test's directory, run in
// the foreground as a child of the test (-D), stopped with SIGTERM, and every
// process of its connections killed with it.
#include "sshd_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "support.hpp"
#include "sys/clock.hpp"
#include "sys/events.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"

namespace fs = std::filesystem;

namespace courier::test {

namespace {

constexpr const char* kSshd = "/usr/sbin/sshd";
constexpr const char* kKeygen = "/usr/bin/ssh-keygen";
constexpr long kStartMs = 10'000;

// Whether something listens on the port now.
bool accepts_connections(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(s);
  return ok;
}

std::string current_user() {
  const passwd* pw = ::getpwuid(::geteuid());
  if (!pw) throw std::runtime_error("SshdServer: the current user has no passwd entry");
  return pw->pw_name;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("SshdServer: cannot write " + path.string());
}

// The server's own configuration: nothing of /etc/ssh is read. Sessions get
// no machine or user git configuration (git on the server side reads only
// the repository's own).
std::string config_text(const fs::path& dir, int port) {
  std::ostringstream c;
  c << "ListenAddress 127.0.0.1\n"
    << "Port " << port << "\n"
    << "HostKey " << (dir / "host_key").string() << "\n"
    << "AuthorizedKeysFile " << (dir / "authorized_keys").string() << "\n"
    << "PidFile " << (dir / "sshd.pid").string() << "\n"
    << "StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
    << "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nLogLevel VERBOSE\n"
    << "AllowAgentForwarding no\nAllowTcpForwarding no\nX11Forwarding no\nPrintMotd no\n"
    << "SetEnv GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null\n";
  return c.str();
}

// The first two words of an OpenSSH public key line: "TYPE BASE64".
std::string key_words(const std::string& line) {
  std::istringstream in(line);
  std::string type, blob;
  in >> type >> blob;
  if (type.empty() || blob.empty()) throw std::runtime_error("SshdServer: not a public key line: " + line);
  return type + " " + blob;
}

// Every descendant of `root` (children first found through /proc's ppid).
std::vector<pid_t> descendants_of(pid_t root) {
  std::multimap<int, int> children;
  for (const ProcInfo& p : processes()) children.emplace(p.ppid, p.pid);
  std::vector<pid_t> out;
  std::vector<pid_t> todo = {root};
  while (!todo.empty()) {
    const pid_t parent = todo.back();
    todo.pop_back();
    auto [from, to] = children.equal_range(parent);
    for (auto it = from; it != to; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

}  // namespace

SshdServer SshdServer::start(const fs::path& dir, const SshdOptions& o) {
  if (::access(kSshd, X_OK) != 0)
    throw std::runtime_error("SshdServer: /usr/sbin/sshd is not installed (scripts/bootstrap installs openssh-server)");
  // sshd's privilege separation directory, when it runs as root.
  if (::geteuid() == 0) fs::create_directories("/run/sshd");
  SshdServer s;
  s.dir_ = dir;
  s.user_ = current_user();
  fs::create_directories(dir);
  const RunResult keygen = run({kKeygen, "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", (dir / "host_key").string()});
  if (keygen.exit_code != 0) throw std::runtime_error("SshdServer: ssh-keygen failed: " + keygen.err);
  s.host_key_line_ = key_words(read_file((dir / "host_key.pub").string()));
  write_text(dir / "authorized_keys", o.authorized_key_line + "\n");
  s.port_ = free_loopback_port("SshdServer");
  write_text(dir / "sshd_config", config_text(dir, s.port_));

  sys::SpawnSpec spec;
  spec.exec_path = kSshd;
  spec.argv = {kSshd, "-D", "-e", "-E", (dir / "sshd.log").string(), "-f", (dir / "sshd_config").string()};
  spec.env = {"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "LC_ALL=C"};
  sys::ScopedFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  spec.stdin_fd = spec.stdout_fd = spec.stderr_fd = null.get();
  auto spawned = sys::spawn(spec);
  if (!spawned) throw std::runtime_error("SshdServer: cannot start sshd: " + spawned.error().message);
  s.pid_ = spawned->pid;
  s.pidfd_ = std::move(spawned->pidfd);
  // Ready once a connect succeeds; the wait between tries is on sshd's
  // pidfd, so a server that exits (a bad configuration) ends it at once.
  const sys::MonoNs until = sys::mono_now_ns() + kStartMs * sys::kNsPerMs;
  while (!accepts_connections(s.port_)) {
    auto exited = sys::has_exited(s.pidfd_.get());
    if ((exited && *exited) || sys::mono_now_ns() >= until) {
      throw std::runtime_error("SshdServer: sshd did not start listening on port " + std::to_string(s.port_) + ":\n" +
                               s.log());
    }
    (void)sys::wait_readable_until({s.pidfd_.get()}, sys::mono_now_ns() + 10 * sys::kNsPerMs);
  }
  return s;
}

SshdServer::SshdServer(SshdServer&& other) noexcept
    : dir_(std::move(other.dir_)),
      port_(other.port_),
      pid_(std::exchange(other.pid_, 0)),
      pidfd_(std::move(other.pidfd_)),
      host_key_line_(std::move(other.host_key_line_)),
      user_(std::move(other.user_)) {}

SshdServer::~SshdServer() { stop(); }

int SshdServer::port() const { return port_; }
std::string SshdServer::user() const { return user_; }
std::string SshdServer::host_key_line() const { return host_key_line_; }

std::string SshdServer::known_hosts_line() const {
  return "[127.0.0.1]:" + std::to_string(port_) + " " + host_key_line_;
}

std::string SshdServer::url(const fs::path& abs_repo) const {
  return "ssh://" + user_ + "@127.0.0.1:" + std::to_string(port_) + abs_repo.string();
}

std::string SshdServer::log() const { return read_file((dir_ / "sshd.log").string()); }

std::vector<pid_t> SshdServer::pids() const {
  std::vector<pid_t> out;
  if (pid_ <= 0) return out;
  if (const char st = sys::proc_state(pid_); st != 0 && st != 'Z') out.push_back(pid_);
  for (pid_t p : descendants_of(pid_)) {
    if (const char st = sys::proc_state(p); st != 0 && st != 'Z') out.push_back(p);
  }
  return out;
}

// The listener's descendants are found while it still lives (they are its
// children until it exits) and killed first: sshd's SIGTERM ends only the
// listener, and a connection whose command waits (a hook held by a test)
// would outlive it. A test process that is a child subreaper (the
// supervisor makes it one) inherits the orphans among them: those it reaps.
void SshdServer::stop() {
  if (pid_ <= 0) return;
  const std::vector<pid_t> rest = descendants_of(pid_);
  const sys::MonoNs until = sys::mono_now_ns() + kStartMs * sys::kNsPerMs;
  std::vector<sys::ScopedFd> fds;
  for (pid_t p : rest) {
    if (auto fd = sys::pidfd_open(p)) {
      (void)sys::pidfd_signal(fd->get(), SIGKILL);
      fds.push_back(std::move(*fd));
    }
  }
  for (const auto& fd : fds) (void)sys::wait_readable_until({fd.get()}, until);
  const pid_t self = ::getpid();
  for (pid_t p : rest) {
    if (auto st = sys::proc_stat(p); st && st->ppid == self) (void)::waitpid(p, nullptr, __WALL);
  }
  (void)sys::pidfd_signal(pidfd_.get(), SIGTERM);
  auto ready = sys::wait_readable_until({pidfd_.get()}, until);
  if (!ready || ready->empty()) (void)sys::pidfd_signal(pidfd_.get(), SIGKILL);
  (void)sys::reap(pidfd_.get());
  pid_ = 0;
}

}  // namespace courier::test
