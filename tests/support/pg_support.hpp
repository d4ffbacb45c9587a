// pg_support.hpp — a throwaway PostgreSQL 15 cluster for the tests: made with
// initdb and started with pg_ctl as the user postgres (initdb refuses root)
// in a temporary directory of its own, listening on 127.0.0.1 on a free port
// and on a Unix socket in that directory, trust authentication for local
// connections, the server's durability settings left at their defaults
// (fsync on: the journal's tests prove durability).
#pragma once

#include <string>

namespace courier::test {

class PgCluster {
 public:
  // Where the server's programs are (Debian's postgresql-15 package).
  static constexpr const char* kBinDir = "/usr/lib/postgresql/15/bin";

  // True when initdb, pg_ctl and psql are installed; otherwise the reason,
  // for a test to skip with (scripts/bootstrap installs them).
  static bool available(std::string* why = nullptr);

  // A new cluster, running, with the database `courier` created. Throws
  // std::runtime_error with the server's log when it cannot be made.
  static PgCluster start();

  PgCluster(PgCluster&& other) noexcept;
  PgCluster& operator=(PgCluster&&) = delete;
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;
  // Stops the server (immediate, then SIGKILL to what is left) and removes
  // the directory: no process and no file left behind.
  ~PgCluster();

  // postgres://postgres@127.0.0.1:PORT/courier
  std::string url() const;
  // The same database over the Unix socket (postgresql:///courier?host=DIR&port=PORT&user=postgres).
  std::string socket_url() const;
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }

  // pg_ctl stop: "fast" (sessions ended, a checkpoint written) or
  // "immediate" (the server's processes quit at once, as in a crash: what
  // was committed comes back from the WAL at restart). Throws on failure.
  void stop(const std::string& mode = "fast");
  // pg_ctl start again: same port, same data. Throws on failure.
  void restart();
  bool running() const { return running_; }
  // pg_terminate_backend of every backend whose application_name starts
  // with `prefix` (a partition of that client from the database, seen from
  // the server's side). Returns how many were ended.
  int terminate(const std::string& application_name_prefix);
  // psql -At on the courier database: the answer's text, trimmed. Throws
  // std::runtime_error (with psql's words) when the statement fails.
  std::string sql(const std::string& query) const;
  // The server's log (for failure messages).
  std::string log() const;

 private:
  PgCluster() = default;
  void start_server();
  std::string dir_;
  int port_ = 0;
  bool running_ = false;
};

// A SQL string literal of `text` ('' doubled).
std::string sql_literal(const std::string& text);

}  // namespace courier::test

// In a doctest case: the cluster `name`, or a skip with the reason when
// PostgreSQL is not installed.
#define PG_CLUSTER_OR_SKIP(name)                              \
  std::string pg_missing_;                                    \
  if (!::courier::test::PgCluster::available(&pg_missing_)) { \
    MESSAGE("skipped: " << pg_missing_);                      \
    return;                                                   \
  }                                                           \
  ::courier::test::PgCluster name = ::courier::test::PgCluster::start()
