// service_options.hpp — `git-courier serve`'s configuration: its flags, and
// --config FILE (a JSON object whose keys are the flag names without
// dashes, lists for the repeatable ones); a flag on the command line wins
// over the file. Pure but for reading the config file.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "courier/result.hpp"

namespace courier::service {

struct ServiceOptions {
  std::string socket;                 // default: default_socket_path()
  std::optional<std::string> listen;  // "127.0.0.1:PORT"
  std::optional<std::string> api_token_file;
  std::size_t workers = 4;
  std::size_t warm = 0;
  std::optional<std::string> journal;              // default: the caller's (cli)
  std::optional<std::string> state;                // a state URL (sqlite:PATH, postgres://...); not with journal
  std::optional<std::string> state_file;           // the state URL read from this file instead (a password off argv)
  std::optional<std::string> host_id;              // this host's name in a shared state; default: the host name
  std::optional<std::string> lane_dir;             // default: default_lane_dir(), as push
  std::string repo_root;                           // required
  std::map<std::string, std::string> credentials;  // NAME -> key:FILE | bearer:FILE | ssh-key:FILE | credential
  // NAME -> the remotes or URL prefixes it may be sent to, as given
  // (service_credentials() checks them; credential_scope.hpp).
  std::map<std::string, std::vector<std::string>> credential_scopes;
  std::vector<std::uint32_t> allow_uids;  // empty: this process's uid
  std::vector<std::uint32_t> allow_gids;
  std::size_t max_queued = 256;
  std::chrono::milliseconds drain_timeout{30'000};
  // With a PostgreSQL state: the lanes' leases (L1, L3).
  std::chrono::milliseconds lease_ttl{60'000};
  std::chrono::milliseconds lease_margin{12'000};
  // How long a stop's reap, then its end of file, are each waited for
  // before the stop counts as unconfirmed (default: kReapBound, kEofBound).
  std::optional<std::chrono::milliseconds> stop_bound;
  std::optional<std::string> ca_file;
  // ssh remotes (A5): the known-hosts file host keys are verified against
  // (default: ~/.ssh/known_hosts of the user the service runs as).
  std::optional<std::string> known_hosts;
  bool allow_http_loopback = false;
  std::optional<std::string> config;
  bool help = false;
  // What the command line risks and the service should say when it starts
  // (a password in --state's URL).
  std::vector<std::string> warnings;
};

// Arguments after `serve`. Errors: invalid_argument naming the flag (or
// the config file's key).
Result<ServiceOptions> parse_service_options(const std::vector<std::string>& args);

// $XDG_RUNTIME_DIR/git-courier/serve.sock; for root /run/git-courier/serve.sock
// (under the test root, sys/state_paths.hpp). Errors: invalid_argument (not
// root and no XDG_RUNTIME_DIR; a refused test root).
Result<std::string> default_socket_path();

// "127.0.0.1:PORT" taken apart. Errors: invalid_argument.
Result<std::pair<std::string, std::uint16_t>> parse_listen(const std::string& text);

}  // namespace courier::service
