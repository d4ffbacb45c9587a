// http_server_mhd.hpp — the service's HTTP server: libmicrohttpd (lazily
// loaded) on listening sockets this process bound itself, the peer check of
// every request on the Unix socket (SO_PEERCRED, SO_PEERGROUPS), the bearer
// token on loopback TCP, and event streams served from suspended
// connections, so a long stream holds no thread (docs/design.md "The
// service"). Connections are bounded (docs/service.md "Connection
// limits"): a cap per listener set from the descriptor limit, past which a
// request is answered 503; a short idle timeout until a request is
// admitted; refusals logged at a bounded rate.
#pragma once

#include <chrono>
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
  // Connections each listener holds before it answers 503 (see
  // connection_cap).
  unsigned connection_cap = 256;
};

// How long (seconds) a connection may stay idle until a request on it is
// admitted (peer allowed, token right): long enough for any client on this
// host to send its request, short enough that idle connections of a caller
// without a token cannot pile up.
inline constexpr unsigned kPreAuthTimeoutS = 5;
// The idle timeout once a request was admitted (a waiting event stream is
// suspended and never times out).
inline constexpr unsigned kAdmittedTimeoutS = 300;
// Descriptors kept for everything else the service opens (journal, lanes,
// children's pipes and pidfds, TLS, warm children).
inline constexpr unsigned kReservedFds = 512;
// libmicrohttpd accepts this many connections past the cap, to answer them
// 503 rather than leave them in the listen backlog.
inline constexpr unsigned kCapHeadroom = 64;
// At most this many refusal lines (peer_refused, caller_refused,
// over_capacity, http_server) per second each; the rest are counted.
inline constexpr unsigned kRefusalLogsPerSecond = 10;
// The memory libmicrohttpd gives each connection (its pool: the request's
// headers as read, then the buffer a response is written from). It zeroes
// the pool as it reuses it, so each open connection, an event stream
// parked for hours included, keeps all of it resident: 32 KiB by
// libmicrohttpd's default, half of that here. A request's line and
// headers must fit in about half of it (8 KiB, as nginx's default for a
// header line; this API's requests send well under 1 KiB); bodies are read
// in pieces and are not held there.
inline constexpr std::size_t kConnectionMemory = 16 * 1024;
// The most an event stream's response asks of its reader at once (lines
// are a few hundred bytes; a longer one, a finished outcome, comes in
// pieces).
inline constexpr std::size_t kStreamBlock = 4 * 1024;
// How long a stopping service waits for its event streams to send their
// last lines (a local reader takes them in microseconds; one that reads
// nothing does not hold the stop longer).
inline constexpr std::chrono::milliseconds kStreamEndBound{2'000};

// The cap of each listener for a descriptor limit `fd_limit` shared by
// `listeners` listeners: what is left after kReservedFds and kCapHeadroom,
// split evenly, and at least 16.
unsigned connection_cap(std::uint64_t fd_limit, unsigned listeners);

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
  // Waits until every event stream has been written to its end (its
  // delivery finished: the `finished` line sent), at most `bound`; false:
  // some were still open. The drain calls it before stop().
  bool finish_streams(std::chrono::milliseconds bound);
  // Stops serving: closes the listeners and every connection.
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace courier::service
