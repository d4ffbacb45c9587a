// state_url.hpp — the one parser of `--state` (and ExecutorOptions::state):
// where a host keeps its journal and its lanes.
//
//   sqlite:PATH          the SQLite journal at PATH (absolute or relative to
//                        the working directory) and flock lanes: one host
//   postgres://...       PostgreSQL (libpq's URL, with its query parameters):
//   postgresql://...     the journal and the lanes' leases, for a fleet
//
// A bare path is refused (the spelling `sqlite:PATH` is suggested), so that
// a typo of a URL is never taken for a file name. A password in the URL is
// accepted (libpq needs it) and never shown: messages use `redacted`.
#pragma once

#include <string>
#include <string_view>

#include "courier/result.hpp"

namespace courier::state {

struct StateUrl {
  enum class Kind { sqlite, postgres } kind = Kind::sqlite;
  std::string path;      // sqlite: the journal's file
  std::string conninfo;  // postgres: the URL as libpq takes it (may hold a password)
  std::string redacted;  // for messages: the URL without its password
};

// Errors: invalid_argument, naming the text redacted and what is wrong.
Result<StateUrl> parse_state_url(std::string_view text);

}  // namespace courier::state
