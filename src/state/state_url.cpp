// state_url.cpp — parse_state_url: `sqlite:PATH` or a PostgreSQL URL (state_url.hpp).
//
// A postgres:// URL with a host is checked by the project's URL parser
// (src/wire/url.hpp: one grammar for every URL); one without a host
// (postgresql:///db?host=/run/postgresql, libpq's spelling for a Unix
// socket) has no authority to check and is handed to libpq as it is, which
// reports what it cannot read when it connects.
#include "state/state_url.hpp"

#include "pg/connection.hpp"
#include "wire/url.hpp"

namespace courier::state {

namespace {

constexpr std::string_view kSqlite = "sqlite:";

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && wire::ascii_lower(text.substr(0, prefix.size())) == prefix;
}

tl::unexpected<Error> refuse(std::string_view text, const std::string& why) {
  return fail(Errc::invalid_argument, "--state '" + pg::redact_conninfo(text) + "': " + why);
}

Result<StateUrl> parse_postgres(std::string_view text) {
  StateUrl u;
  u.kind = StateUrl::Kind::postgres;
  u.conninfo = std::string(text);
  u.redacted = pg::redact_conninfo(text);
  const auto authority = text.substr(text.find("://") + 3);
  if (authority.empty()) return refuse(text, "no database named (postgres://HOST[:PORT]/DATABASE)");
  if (authority.front() == '/') return u;  // no host: a Unix socket, libpq's own defaults
  auto parsed = wire::parse_url(text, "--state URL");
  if (!parsed) return tl::unexpected(parsed.error());
  if (parsed->path == "/") return refuse(text, "no database named (postgres://HOST[:PORT]/DATABASE)");
  return u;
}

}  // namespace

Result<StateUrl> parse_state_url(std::string_view text) {
  if (text.empty()) return refuse(text, "empty (sqlite:PATH or postgres://HOST/DATABASE)");
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return refuse(text, "contains a control character");
  }
  if (starts_with_ci(text, kSqlite)) {
    StateUrl u;
    u.path = std::string(text.substr(kSqlite.size()));
    if (u.path.empty()) return refuse(text, "sqlite: names no file (sqlite:PATH)");
    u.redacted = std::string(text);
    return u;
  }
  if (starts_with_ci(text, "postgres://") || starts_with_ci(text, "postgresql://")) return parse_postgres(text);
  if (text.find("://") != std::string_view::npos ||
      (text.find(':') != std::string_view::npos && text.front() != '/' && text.front() != '.')) {
    return refuse(text, "unknown scheme: the state is sqlite:PATH or postgres://HOST[:PORT]/DATABASE");
  }
  return refuse(text, "a bare path is not a state URL: write sqlite:" + std::string(text) + " for a SQLite journal");
}

}  // namespace courier::state
