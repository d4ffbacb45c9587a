// http_server_mhd.cpp — the libmicrohttpd adapter: bytes in and out, the
// caller's identity, suspended event streams. Routing is api.cpp's.
#include "service/http_server_mhd.hpp"

#include <microhttpd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "auth/verify.hpp"
#include "service/log_rate.hpp"
#include "service/service_log.hpp"
#include "sys/service_socket.hpp"
#include "wire/url.hpp"

namespace courier::service {

struct HttpServer::Impl {
  HttpServerOptions opt;
  Api* api = nullptr;
  MHD_Daemon* unix_daemon = nullptr;
  MHD_Daemon* tcp_daemon = nullptr;
};

namespace {

// One request being read.
struct RequestState {
  std::string body;
  bool too_large = false;
};

// One event stream being written.
struct StreamState {
  std::unique_ptr<EventStream> stream;
  MHD_Connection* connection = nullptr;
  std::string pending;
  std::size_t offset = 0;
};

// The event streams being written, each until libmicrohttpd frees it (its
// last line sent, or its connection gone): a stopping service waits for
// them, so a delivery's `finished` line reaches its follower before the
// connections are closed.
struct OpenStreams {
  std::mutex mu;
  std::condition_variable cv;
  long n = 0;
};
OpenStreams g_streams;

struct DaemonContext {
  HttpServer::Impl* server = nullptr;
  bool tcp = false;
  unsigned cap = 0;                  // connections before 503
  std::atomic<long> connections{0};  // open now (libmicrohttpd's notifications)
};

// Refusals are logged at a bounded rate: a caller opening connections as
// fast as it can must not write a line for each.
LogRate g_caller_log("caller_refused", kRefusalLogsPerSecond);
LogRate g_peer_log("peer_refused", kRefusalLogsPerSecond);
LogRate g_capacity_log("over_capacity", kRefusalLogsPerSecond);
LogRate g_mhd_log("http_server", kRefusalLogsPerSecond);

ssize_t read_stream(void* cls, std::uint64_t /*pos*/, char* buf, std::size_t max) {
  auto* s = static_cast<StreamState*>(cls);
  for (;;) {
    if (s->offset < s->pending.size()) {
      const std::size_t n = std::min(max, s->pending.size() - s->offset);
      std::memcpy(buf, s->pending.data() + s->offset, n);
      s->offset += n;
      return static_cast<ssize_t>(n);
    }
    EventStream::Chunk c = s->stream->next();
    if (!c.text.empty()) {
      s->pending = std::move(c.text);
      s->offset = 0;
      continue;
    }
    if (c.end) return MHD_CONTENT_READER_END_OF_STREAM;
    // Nothing yet: the connection is parked (no thread waits on it) until
    // the delivery's next event resumes it.
    MHD_Connection* conn = s->connection;
    if (s->stream->wait([conn] { MHD_suspend_connection(conn); }, [conn] { MHD_resume_connection(conn); })) return 0;
  }
}

void free_stream(void* cls) {
  delete static_cast<StreamState*>(cls);
  {
    std::lock_guard<std::mutex> lock(g_streams.mu);
    --g_streams.n;
  }
  g_streams.cv.notify_all();
}

std::string encode(const std::string& s) {
  std::string out;
  for (char ch : s) out += wire::is_unreserved(ch) ? std::string(1, ch) : wire::percent_escape(ch);
  return out;
}

MHD_Result add_argument(void* cls, MHD_ValueKind, const char* key, const char* value) {
  auto* q = static_cast<std::string*>(cls);
  if (!q->empty()) *q += '&';
  *q += encode(key ? key : "") + "=" + encode(value ? value : "");
  return MHD_YES;
}

MHD_Result queue(MHD_Connection* c, ApiResponse r) {
  MHD_Response* resp = nullptr;
  if (r.stream) {
    auto* s = new StreamState{std::move(r.stream), c, {}, 0};
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, kStreamBlock, &read_stream, s, &free_stream);
    if (resp == nullptr) delete s;
    if (resp != nullptr) {
      std::lock_guard<std::mutex> lock(g_streams.mu);
      ++g_streams.n;
    }
  } else {
    resp = MHD_create_response_from_buffer(r.body.size(), r.body.data(), MHD_RESPMEM_MUST_COPY);
  }
  if (resp == nullptr) return MHD_NO;
  MHD_add_response_header(resp, "Content-Type", r.content_type.c_str());
  for (const auto& [k, v] : r.headers) MHD_add_response_header(resp, k.c_str(), v.c_str());
  const MHD_Result ok = MHD_queue_response(c, static_cast<unsigned>(r.status), resp);
  MHD_destroy_response(resp);
  return ok;
}

// Who is calling: on the Unix socket the kernel's record of the peer; on
// TCP the bearer token. Nullopt: allowed; else the refusal to send.
std::optional<ApiResponse> refuse_caller(const DaemonContext& ctx, MHD_Connection* c) {
  HttpServer::Impl& s = *ctx.server;
  if (ctx.tcp) {
    const char* auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    // The scheme's name is case-insensitive (RFC 9110, section 11.1):
    // "bearer" and "BEARER" are "Bearer".
    const auto presented = auth::bearer_token(auth ? auth : "");
    if (presented && token_matches(*presented, s.opt.token)) return std::nullopt;
    g_caller_log.log(LogLevel::warn, {{"transport", "tcp"}, {"why", auth ? "wrong token" : "no token"}});
    ApiResponse r = s.api->error(401, "unauthorized", "", "a bearer token is required (Authorization: Bearer TOKEN)");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }
  const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  auto peer = info ? sys::peer_credentials(info->connect_fd)
                   : Result<sys::PeerCredentials>(fail(Errc::os_error, "no descriptor for the connection"));
  if (peer && peer_allowed(peer->uid, peer->gid, peer->groups, s.opt.allow_uids, s.opt.allow_gids)) return std::nullopt;
  nlohmann::json fields = {{"transport", "unix"}};
  if (peer) {
    fields["pid"] = peer->pid;
    fields["uid"] = peer->uid;
    fields["gid"] = peer->gid;
  } else {
    fields["why"] = peer.error().message;
  }
  g_peer_log.log(LogLevel::warn, fields);
  return s.api->error(403, "peer_refused", "",
                      peer ? "uid " + std::to_string(peer->uid) + " may not use this service (--allow-uid, --allow-gid)"
                           : "the caller's credentials cannot be read");
}

// Past the listener's cap a request is answered at once, before its body
// or its caller is looked at: 503 with Retry-After, and the connection
// closed.
MHD_Result refuse_over_capacity(DaemonContext& ctx, MHD_Connection* c, long open) {
  g_capacity_log.log(LogLevel::warn,
                     {{"transport", ctx.tcp ? "tcp" : "unix"}, {"connections", open}, {"cap", ctx.cap}});
  ApiResponse r =
      ctx.server->api->error(503, "over_capacity", "", "the service holds its maximum of connections; retry later");
  r.headers.emplace_back("Retry-After", "1");
  r.headers.emplace_back("Connection", "close");
  return queue(c, std::move(r));
}

MHD_Result on_request(void* cls, MHD_Connection* c, const char* url, const char* method, const char* /*version*/,
                      const char* upload, std::size_t* upload_size, void** state) {
  auto* ctx = static_cast<DaemonContext*>(cls);
  if (*state == nullptr) {
    *state = new RequestState();
    const long open = ctx->connections.load();
    if (open > static_cast<long>(ctx->cap)) return refuse_over_capacity(*ctx, c, open);
    return MHD_YES;
  }
  auto* rs = static_cast<RequestState*>(*state);
  if (*upload_size != 0) {
    if (rs->body.size() + *upload_size > kMaxBody) {
      rs->too_large = true;  // the rest is read and dropped
    } else {
      rs->body.append(upload, *upload_size);
    }
    *upload_size = 0;
    return MHD_YES;
  }
  if (auto refusal = refuse_caller(*ctx, c)) return queue(c, std::move(*refusal));
  // Admitted: the short idle timeout of a connection nobody has vouched for
  // no longer applies.
  MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, kAdmittedTimeoutS);
  ApiRequest r;
  r.method = method;
  r.path = url;
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, &add_argument, &r.query);
  r.body = std::move(rs->body);
  r.body_too_large = rs->too_large;
  ApiResponse resp = ctx->server->api->handle(r);
  if (resp.status >= 500) log_event(LogLevel::error, "api_error", {{"status", resp.status}, {"path", r.path}});
  return queue(c, std::move(resp));
}

void on_completed(void*, MHD_Connection*, void** state, MHD_RequestTerminationCode) {
  delete static_cast<RequestState*>(*state);
  *state = nullptr;
}

void on_log(void*, const char* fmt, va_list ap) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  std::string text = buf;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  g_mhd_log.log(LogLevel::warn, {{"message", text}});
}

void on_connection(void* cls, MHD_Connection*, void**, MHD_ConnectionNotificationCode code) {
  auto* ctx = static_cast<DaemonContext*>(cls);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    ctx->connections.fetch_add(1);
  } else {
    ctx->connections.fetch_sub(1);
  }
}

// libmicrohttpd splits its connection limit evenly among a pool's threads
// and a thread at its share closes what it accepts unanswered, however
// idle the others are: each thread's share is the whole cap (plus the
// headroom), and the cap itself is counted across the threads
// (on_connection) and answered 503.
//
// A pool is asked for only when there are two threads or more: a pool of
// one is no pool, and libmicrohttpd says so at every start with a warning
// ('"1", specified for thread pool size, is ignored') that nobody running
// the service can act on (rule X-UNIT2).
MHD_Daemon* start_daemon(int fd, DaemonContext* ctx, unsigned threads) {
  const unsigned mhd_limit = (ctx->cap + kCapHeadroom) * std::max(threads, 1u);
  const unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  const bool pool = threads > 1;
  MHD_OptionItem pool_option[] = {{pool ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads, nullptr},
                                  {MHD_OPTION_END, 0, nullptr}};
  return MHD_start_daemon(flags, 0, nullptr, nullptr, &on_request, ctx, MHD_OPTION_EXTERNAL_LOGGER, &on_log, nullptr,
                          MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_ARRAY, pool_option, MHD_OPTION_NOTIFY_COMPLETED,
                          &on_completed, nullptr, MHD_OPTION_NOTIFY_CONNECTION, &on_connection, ctx,
                          MHD_OPTION_CONNECTION_TIMEOUT, kPreAuthTimeoutS, MHD_OPTION_CONNECTION_LIMIT, mhd_limit,
                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemory, MHD_OPTION_END);
}

DaemonContext g_unix_ctx;
DaemonContext g_tcp_ctx;

}  // namespace

bool peer_allowed(std::uint32_t uid, std::uint32_t gid, const std::vector<std::uint32_t>& groups,
                  const std::vector<std::uint32_t>& allow_uids, const std::vector<std::uint32_t>& allow_gids) {
  auto in = [](const std::vector<std::uint32_t>& v, std::uint32_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (in(allow_uids, uid) || in(allow_gids, gid)) return true;
  for (std::uint32_t g : groups) {
    if (in(allow_gids, g)) return true;
  }
  return false;
}

unsigned connection_cap(std::uint64_t fd_limit, unsigned listeners) {
  constexpr std::uint64_t kFloor = 16;
  const std::uint64_t kept = static_cast<std::uint64_t>(kReservedFds) + kCapHeadroom * std::max(listeners, 1u);
  const std::uint64_t each = fd_limit > kept ? (fd_limit - kept) / std::max(listeners, 1u) : 0;
  return static_cast<unsigned>(std::clamp<std::uint64_t>(each, kFloor, 1u << 20));
}

bool token_matches(const std::string& presented, const std::string& expected) {
  if (expected.empty()) return false;
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < presented.size(); ++i) {
    diff |= static_cast<unsigned char>(presented[i] ^ expected[i % expected.size()]);
  }
  return diff == 0;
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(HttpServerOptions options, Api& api) {
  auto server = std::unique_ptr<HttpServer>(new HttpServer());
  server->impl_ = std::make_unique<Impl>();
  Impl& s = *server->impl_;
  s.opt = std::move(options);
  s.api = &api;
  for (DaemonContext* ctx : {&g_unix_ctx, &g_tcp_ctx}) {
    ctx->server = &s;
    ctx->cap = s.opt.connection_cap;
    ctx->connections = 0;
  }
  g_tcp_ctx.tcp = true;
  if (s.opt.unix_listener) {
    s.unix_daemon = start_daemon(s.opt.unix_listener.get(), &g_unix_ctx, s.opt.threads);
    if (s.unix_daemon == nullptr) return fail(Errc::os_error, "libmicrohttpd could not serve the Unix socket");
    (void)s.opt.unix_listener.release();  // the daemon closes it
  }
  if (s.opt.tcp_listener) {
    s.tcp_daemon = start_daemon(s.opt.tcp_listener.get(), &g_tcp_ctx, 1);
    if (s.tcp_daemon == nullptr) return fail(Errc::os_error, "libmicrohttpd could not serve the TCP socket");
    (void)s.opt.tcp_listener.release();
  }
  return server;
}

bool HttpServer::finish_streams(std::chrono::milliseconds bound) {
  std::unique_lock<std::mutex> lock(g_streams.mu);
  return g_streams.cv.wait_for(lock, bound, [] { return g_streams.n == 0; });
}

void HttpServer::stop() {
  if (!impl_) return;
  if (impl_->unix_daemon) MHD_stop_daemon(impl_->unix_daemon);
  if (impl_->tcp_daemon) MHD_stop_daemon(impl_->tcp_daemon);
  impl_->unix_daemon = nullptr;
  impl_->tcp_daemon = nullptr;
}

HttpServer::~HttpServer() { stop(); }

}  // namespace courier::service
