// connection.cpp — one PostgreSQL connection over asynchronous libpq, every
// call bounded by an absolute monotonic instant (connection.hpp).
#include "pg/connection.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <utility>

#include "sys/events.hpp"
#include "sys/lazy_library.hpp"
#include "wire/url.hpp"

namespace courier::pg {

namespace {

// How often the server checks, while a statement runs, that this client is
// still there: a statement this side gave up on (its instant passed, the
// connection closed) stops within this, and with it its locks.
constexpr const char* kServerOptions = "-c client_connection_check_interval=1000";

std::string trimmed(const char* text) {
  std::string s = text ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s.empty() ? std::string("unknown error") : s;
}

tl::unexpected<Error> failure(const std::string& redacted, const std::string& why) {
  return fail(Errc::database_failed, "PostgreSQL " + redacted + ": " + why);
}

std::string seconds_of(std::chrono::milliseconds ms) {
  // connect_timeout is whole seconds, at least 2 (libpq's own minimum).
  return std::to_string(std::max<long long>(2, (ms.count() + 999) / 1000));
}

}  // namespace

std::string redact_conninfo(std::string_view conninfo) {
  // The user name stays (it says who connects); the password goes, in the
  // user information or the query. One redaction for every URL (wire/url.hpp).
  return wire::redact_url(conninfo, wire::Redact::password);
}

Result<Connection> Connection::open(const ConnectOptions& options, sys::MonoNs until) {
  const std::string redacted = redact_conninfo(options.conninfo);
  if (auto lib = sys::load_shared_library(sys::SharedLibrary::pq); !lib) return failure(redacted, lib.error().message);
  const std::string connect_timeout = seconds_of(options.timeout);
  const std::string user_timeout = std::to_string(options.timeout.count());
  // The URL first, expanded (expand_dbname): what follows overrides it.
  const char* keys[] = {"dbname",          "application_name",    "connect_timeout",  "tcp_user_timeout", "keepalives",
                        "keepalives_idle", "keepalives_interval", "keepalives_count", "options",          nullptr};
  const char* values[] = {options.conninfo.c_str(),
                          options.application_name.c_str(),
                          connect_timeout.c_str(),
                          user_timeout.c_str(),
                          "1",
                          "5",
                          "2",
                          "2",
                          kServerOptions,
                          nullptr};
  PGconn* raw = PQconnectStartParams(keys, values, 1);
  if (raw == nullptr) return failure(redacted, "out of memory");
  Connection c(raw, redacted);
  if (PQstatus(raw) == CONNECTION_BAD) return c.lost(trimmed(PQerrorMessage(raw)));
  PostgresPollingStatusType poll = PGRES_POLLING_WRITING;
  while (poll != PGRES_POLLING_OK) {
    if (poll == PGRES_POLLING_FAILED) return c.lost(trimmed(PQerrorMessage(raw)));
    // The socket may change between steps (another address, another host).
    const auto ready =
        sys::wait_fd_until(PQsocket(raw), poll == PGRES_POLLING_READING ? sys::kReadable : sys::kWritable, until);
    if (!ready) return c.lost(ready.error().message);
    if (!*ready) return c.lost("no connection within the time allowed");
    poll = PQconnectPoll(raw);
  }
  if (PQsetnonblocking(raw, 1) != 0) return c.lost(trimmed(PQerrorMessage(raw)));
  // The server's notices (a table that already exists, ...) are not for the
  // user's terminal: libpq would print them on stderr.
  PQsetNoticeProcessor(
      raw, [](void*, const char*) {}, nullptr);
  return c;
}

Connection::Connection(Connection&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)),
      redacted_(std::move(other.redacted_)),
      sqlstate_(std::move(other.sqlstate_)),
      broken_(std::exchange(other.broken_, true)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    conn_ = std::exchange(other.conn_, nullptr);
    redacted_ = std::move(other.redacted_);
    sqlstate_ = std::move(other.sqlstate_);
    broken_ = std::exchange(other.broken_, true);
  }
  return *this;
}

Connection::~Connection() { close(); }

void Connection::close() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
}

tl::unexpected<Error> Connection::lost(const std::string& why) {
  // Whatever was in flight is abandoned with the connection: closing it is
  // the cancel (the server notices within kServerOptions' interval).
  broken_ = true;
  close();
  return failure(redacted_, why);
}

int Connection::socket() const { return conn_ == nullptr ? -1 : PQsocket(conn_); }

Result<void> Connection::flush(sys::MonoNs until) {
  for (;;) {
    const int rc = PQflush(conn_);
    if (rc == 0) return {};
    if (rc < 0) return lost(trimmed(PQerrorMessage(conn_)));
    // More to send: wait for room, or for the server's answer (which must
    // be read for the server to take more).
    const auto ready = sys::wait_fd_until(PQsocket(conn_), sys::kReadable | sys::kWritable, until);
    if (!ready) return lost(ready.error().message);
    if (!*ready) return lost("the statement could not be sent within the time allowed");
    if (PQconsumeInput(conn_) == 0) return lost(trimmed(PQerrorMessage(conn_)));
  }
}

Result<void> Connection::send(std::string_view sql, const Params* params, sys::MonoNs until) {
  sqlstate_.clear();
  if (broken_ || conn_ == nullptr) return failure(redacted_, "the connection was lost earlier");
  const std::string text(sql);
  int sent = 0;
  if (params == nullptr) {
    sent = PQsendQuery(conn_, text.c_str());
  } else {
    std::vector<const char*> values;
    values.reserve(params->size());
    for (const auto& p : *params) values.push_back(p ? p->c_str() : nullptr);
    sent = PQsendQueryParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                             nullptr, 0);
  }
  if (sent == 0) return lost(trimmed(PQerrorMessage(conn_)));
  return flush(until);
}

Result<Rows> Connection::collect(sys::MonoNs until) {
  Rows out;
  std::optional<Error> first_error;
  for (;;) {
    while (PQisBusy(conn_) != 0) {
      const auto ready = sys::wait_fd_until(PQsocket(conn_), sys::kReadable, until);
      if (!ready) return lost(ready.error().message);
      if (!*ready) return lost("no answer within the time allowed");
      if (PQconsumeInput(conn_) == 0) return lost(trimmed(PQerrorMessage(conn_)));
    }
    PGresult* r = PQgetResult(conn_);
    if (r == nullptr) break;  // every result of the statement(s) read
    const ExecStatusType status = PQresultStatus(r);
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
      out.rows.clear();
      const int rows = PQntuples(r);
      const int cols = PQnfields(r);
      for (int i = 0; i < rows; ++i) {
        Row row;
        row.reserve(static_cast<std::size_t>(cols));
        for (int j = 0; j < cols; ++j) {
          if (PQgetisnull(r, i, j)) {
            row.emplace_back(std::nullopt);
          } else {
            row.emplace_back(std::string(PQgetvalue(r, i, j), static_cast<std::size_t>(PQgetlength(r, i, j))));
          }
        }
        out.rows.push_back(std::move(row));
      }
      const char* affected = PQcmdTuples(r);
      out.affected = affected && *affected ? std::stoull(affected) : 0;
    } else if (!first_error) {
      const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      sqlstate_ = state ? state : "";
      first_error = Error{Errc::database_failed, "PostgreSQL " + redacted_ + ": " + trimmed(PQresultErrorMessage(r)) +
                                                     (sqlstate_.empty() ? "" : " (SQLSTATE " + sqlstate_ + ")")};
    }
    PQclear(r);
  }
  if (PQstatus(conn_) == CONNECTION_BAD) {
    return lost(first_error ? first_error->message : trimmed(PQerrorMessage(conn_)));
  }
  if (first_error) return tl::unexpected(*first_error);
  return out;
}

Result<Rows> Connection::exec(std::string_view sql, const Params& params, sys::MonoNs until) {
  if (auto sent = send(sql, &params, until); !sent) return tl::unexpected(sent.error());
  return collect(until);
}

Result<void> Connection::exec_script(std::string_view sql, sys::MonoNs until) {
  if (auto sent = send(sql, nullptr, until); !sent) return sent;
  auto done = collect(until);
  if (!done) return tl::unexpected(done.error());
  return {};
}

Result<std::vector<Notification>> Connection::take_notifications() {
  if (broken_ || conn_ == nullptr) return failure(redacted_, "the connection was lost earlier");
  if (PQconsumeInput(conn_) == 0) return lost(trimmed(PQerrorMessage(conn_)));
  std::vector<Notification> out;
  while (PGnotify* n = PQnotifies(conn_)) {
    out.push_back(Notification{n->relname ? n->relname : "", n->extra ? n->extra : ""});
    PQfreemem(n);
  }
  return out;
}

}  // namespace courier::pg
