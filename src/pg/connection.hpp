// connection.hpp — one PostgreSQL connection (libpq), asynchronous and bounded
// in time: the one place a libpq error becomes an Error (database_failed).
//
// Every call takes an absolute CLOCK_MONOTONIC instant and returns by it:
// the connection is made with PQconnectStart/PQconnectPoll and a statement is
// sent with PQsendQueryParams, the socket polled until the answer or the
// instant. A call that reaches its instant gives up the connection (it is
// closed, which ends the server's work on it too: the session asks the
// server to check for a closed client while a statement runs) and the
// connection is broken(): the caller makes a new one. Not thread-safe: one
// thread at a time (the journal holds a lock; the lease keeper has its own).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "courier/result.hpp"
#include "sys/clock.hpp"

struct pg_conn;

namespace courier::pg {

struct ConnectOptions {
  std::string conninfo;          // a postgres:// URL, as libpq takes it (may hold a password)
  std::string application_name;  // "git-courier/<host>/<instance>": tests find a service's backends by it
  // connect_timeout and tcp_user_timeout; keepalives are on (idle 5 s,
  // interval 2 s, count 2), so a silent server is noticed within ~9 s even
  // between statements.
  std::chrono::milliseconds timeout{5000};
};

using Row = std::vector<std::optional<std::string>>;  // text values, nullopt = NULL
struct Rows {
  std::vector<Row> rows;
  std::uint64_t affected = 0;  // PQcmdTuples: rows inserted, updated or deleted
};
struct Notification {
  std::string channel;
  std::string payload;
};

using Params = std::vector<std::optional<std::string>>;

// The SQLSTATE of a unique violation: a row another connection (host) wrote first.
inline constexpr std::string_view kUniqueViolation = "23505";

class Connection {
 public:
  // Connects without blocking past `until`. Errors: database_failed naming
  // the server (redacted) and libpq's words (refused, authentication
  // failed, no such database, timed out).
  static Result<Connection> open(const ConnectOptions& options, sys::MonoNs until);

  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // One statement with text parameters ($1, $2, ...), answered by `until`.
  // Errors: database_failed with the SQLSTATE in the message (and in
  // last_sqlstate(): a unique violation is a conflict, not a failure), or
  // database_failed with broken() set for a lost or timed-out connection.
  Result<Rows> exec(std::string_view sql, const Params& params, sys::MonoNs until);
  // Several statements, no parameters (the schema). Errors: as exec.
  Result<void> exec_script(std::string_view sql, sys::MonoNs until);

  // The socket, to poll for notifications (-1 when broken).
  int socket() const;
  // What the server sent (LISTEN) since the last call; never blocks.
  // Errors: database_failed and broken() when the connection is lost.
  Result<std::vector<Notification>> take_notifications();

  // The connection is lost or timed out: make a new one.
  bool broken() const { return broken_; }
  // The server as it may be shown: no password.
  const std::string& redacted() const { return redacted_; }
  // The SQLSTATE of the last failed statement ("" if none or not a server error).
  const std::string& last_sqlstate() const { return sqlstate_; }

 private:
  Connection(pg_conn* conn, std::string redacted) : conn_(conn), redacted_(std::move(redacted)) {}
  Result<void> send(std::string_view sql, const Params* params, sys::MonoNs until);
  Result<Rows> collect(sys::MonoNs until);
  Result<void> flush(sys::MonoNs until);
  tl::unexpected<Error> lost(const std::string& why);
  void close();

  pg_conn* conn_ = nullptr;
  std::string redacted_;
  std::string sqlstate_;
  bool broken_ = false;
};

// The conninfo URL as it may be shown: the password of the user
// information and any password parameter of the query replaced by "***",
// control characters by '?'.
std::string redact_conninfo(std::string_view conninfo);

// Creates or migrates the schema: a version table, each migration in one
// transaction under pg_advisory_xact_lock, so two hosts starting at once
// neither race nor apply one twice. Errors: database_failed, and
// invalid_argument for a schema newer than this program knows.
Result<void> migrate(Connection& c, sys::MonoNs until);
// The schema version this program creates.
int schema_version();

}  // namespace courier::pg
