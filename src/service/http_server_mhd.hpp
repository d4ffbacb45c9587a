// http_server_mhd.hpp — the service's HTTP server: libmicrohttpd (lazily
// loaded) on listening sockets this process bound itself, the peer check of
// every request on the Unix socket (SO_PEERCRED, SO_PEERGROUPS), the bearer
// token on loopback TCP, and event streams served from suspended
// connections, so a long stream holds no thread (docs/design.md "The
// service").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "courier/result.hpp"
#include "service/api.hpp"
#include "sys/fd.hpp"

namespace courier::service {

struct HttpServerOptions {
  sys::ScopedFd unix_listener;  // listening (may be invalid: none)
  sys::ScopedFd tcp_listener;   // loopback TCP, listening (may be invalid: none)
  // Who may call on the Unix socket: the peer's uid in allow_uids, or its
  // primary or any supplementary group in allow_gids.
  std::vector<std::uint32_t> allow_uids;
  std::vector<std::uint32_t> allow_gids;
  std::string token;  // the bearer token TCP callers must present
  unsigned threads = 4;
};

// A peer may call when its uid is allowed, or its primary group or one of
// its supplementary groups is.
bool peer_allowed(std::uint32_t uid, std::uint32_t gid, const std::vector<std::uint32_t>& groups,
                  const std::vector<std::uint32_t>& allow_uids, const std::vector<std::uint32_t>& allow_gids);

// The bearer token compared in time that does not depend on where the
// strings differ (only on the presented length).
bool token_matches(const std::string& presented, const std::string& expected);

class HttpServer {
 public:
  // Starts serving (threads of its own). Errors: os_error (the daemon
  // could not start).
  static Result<std::unique_ptr<HttpServer>> start(HttpServerOptions options, Api& api);
  ~HttpServer();  // stop()
  // Stops serving: closes the listeners and every connection.
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace courier::service
