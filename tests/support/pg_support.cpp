// pg_support.cpp — the throwaway PostgreSQL cluster of the tests (pg_support.hpp).
#include "pg_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "support.hpp"

namespace courier::test {

namespace {

namespace fs = std::filesystem;

std::string bin(const char* name) { return std::string(PgCluster::kBinDir) + "/" + name; }

const char* runuser() {
  for (const char* p : {"/usr/sbin/runuser", "/sbin/runuser"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return nullptr;
}

// initdb and pg_ctl refuse root: as root they run as the user postgres.
std::vector<std::string> as_postgres(std::vector<std::string> argv) {
  if (::geteuid() != 0) return argv;
  const char* ru = runuser();
  if (ru == nullptr) throw std::runtime_error("PgCluster: runuser is not installed (util-linux)");
  argv.insert(argv.begin(), {ru, "-u", "postgres", "--"});
  return argv;
}

const std::vector<std::string> kEnv = {"PATH=/usr/bin:/bin", "LC_ALL=C", "PGTZ=UTC"};

std::string pg_trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

RunResult checked(const std::vector<std::string>& argv, const std::string& what, const PgCluster* c) {
  RunResult r = run(argv, {}, Stdin::bytes, kEnv);
  if (r.exit_code != 0) {
    throw std::runtime_error("PgCluster: " + what + " failed (exit " + std::to_string(r.exit_code) + "): " + r.err +
                             r.out + (c ? "\nserver log:\n" + c->log() : std::string()));
  }
  return r;
}

// The postmaster's pid, from postmaster.pid (0 when absent).
pid_t postmaster_pid(const std::string& dir) {
  std::ifstream f(dir + "/data/postmaster.pid");
  long pid = 0;
  f >> pid;
  return static_cast<pid_t>(pid);
}

}  // namespace

std::string sql_literal(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

bool PgCluster::available(std::string* why) {
  for (const char* name : {"initdb", "pg_ctl", "psql"}) {
    if (::access(bin(name).c_str(), X_OK) != 0) {
      if (why) *why = bin(name) + " is not installed (scripts/bootstrap installs postgresql)";
      return false;
    }
  }
  if (::geteuid() == 0 && runuser() == nullptr) {
    if (why) *why = "runuser is not installed: initdb cannot run as postgres";
    return false;
  }
  return true;
}

PgCluster PgCluster::start() {
  PgCluster c;
  // Under /tmp, not $TMPDIR: the user postgres must reach it, and a test's
  // $TMPDIR is usually private to the user running the tests.
  std::string tmpl = "/tmp/courier-pg-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("PgCluster: mkdtemp failed");
  c.dir_ = tmpl;
  if (::geteuid() == 0) checked({"/bin/chown", "postgres:", c.dir_}, "chown", nullptr);
  // --no-sync: initdb does not sync the files it writes (a test's cluster
  // need not survive a power cut of its making); the server keeps fsync on.
  checked(as_postgres({bin("initdb"), "-D", c.dir_ + "/data", "-U", "postgres", "-A", "trust", "-E", "UTF8",
                       "--locale=C", "--no-instructions", "--no-sync"}),
          "initdb", nullptr);
  // A port picked now may be taken by the time the server binds it: try again with another.
  for (int tries = 0;; ++tries) {
    c.port_ = free_loopback_port("PgCluster");
    try {
      c.start_server();
      break;
    } catch (const std::runtime_error&) {
      if (tries == 2) throw;
    }
  }
  checked({bin("psql"), "-X", "-q", "-h", "127.0.0.1", "-p", std::to_string(c.port_), "-U", "postgres", "-d",
           "postgres", "-c", "CREATE DATABASE courier"},
          "CREATE DATABASE", &c);
  return c;
}

void PgCluster::start_server() {
  const std::string options = "-p " + std::to_string(port_) + " -k " + dir_ + " -c listen_addresses=127.0.0.1";
  checked(as_postgres({bin("pg_ctl"), "start", "-D", dir_ + "/data", "-w", "-t", "30", "-l", dir_ + "/server.log", "-o",
                       options}),
          "pg_ctl start", this);
  running_ = true;
}

PgCluster::PgCluster(PgCluster&& other) noexcept
    : dir_(std::exchange(other.dir_, {})), port_(other.port_), running_(std::exchange(other.running_, false)) {}

PgCluster::~PgCluster() {
  if (dir_.empty()) return;
  if (running_) {
    const RunResult r =
        run(as_postgres({bin("pg_ctl"), "stop", "-D", dir_ + "/data", "-m", "immediate", "-w", "-t", "20"}), {},
            Stdin::bytes, kEnv);
    if (r.exit_code != 0) {
      // pg_ctl could not: end the postmaster's process group ourselves.
      if (const pid_t pid = postmaster_pid(dir_); pid > 0) {
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
      }
    }
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string PgCluster::url() const { return "postgres://postgres@127.0.0.1:" + std::to_string(port_) + "/courier"; }

std::string PgCluster::socket_url() const {
  return "postgresql:///courier?host=" + dir_ + "&port=" + std::to_string(port_) + "&user=postgres";
}

void PgCluster::stop(const std::string& mode) {
  checked(as_postgres({bin("pg_ctl"), "stop", "-D", dir_ + "/data", "-m", mode, "-w", "-t", "30"}), "pg_ctl stop",
          this);
  running_ = false;
}

void PgCluster::restart() { start_server(); }

int PgCluster::terminate(const std::string& application_name_prefix) {
  const std::string n = std::to_string(application_name_prefix.size());
  return std::stoi(sql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE left(application_name, " +
                       n + ") = " + sql_literal(application_name_prefix) + " AND pid <> pg_backend_pid()"));
}

std::string PgCluster::sql(const std::string& query) const {
  const RunResult r = checked({bin("psql"), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p",
                               std::to_string(port_), "-U", "postgres", "-d", "courier", "-c", query},
                              "psql " + query, nullptr);
  return pg_trimmed(r.out);
}

std::string PgCluster::log() const {
  std::ifstream f(dir_ + "/server.log");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace courier::test
