// serve.cpp — the service's start, its wait for a signal, and its drain.
#include "service/serve.hpp"

#include <signal.h>

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "auth/auth_spec.hpp"
#include "courier/exit_code.hpp"
#include "auth/bearer_minter.hpp"
#include "journal/journal.hpp"
#include "service/api.hpp"
#include "service/deliveries.hpp"
#include "service/http_server_mhd.hpp"
#include "service/metrics.hpp"
#include "service/resume.hpp"
#include "service/service_log.hpp"
#include "state/state_url.hpp"
#include "sys/fd_limit.hpp"
#include "sys/lazy_library.hpp"
#include "sys/process.hpp"
#include "sys/service_socket.hpp"
#include "sys/signals.hpp"

namespace courier::service {

namespace {

constexpr int kExitConfig = 2;
constexpr int kExitRuntime = 3;
// A stop that could not be confirmed: the number a push exits with for the
// same fact.
constexpr int kExitUnconfirmed = exit_value(ExitCode::unconfirmed);

int config_error(const std::string& message) {
  log_event(LogLevel::error, "config_error", {{"message", message}});
  return kExitConfig;
}

// The signal that ends the service, as the watcher thread saw it.
struct StopSignal {
  std::mutex mu;
  std::condition_variable cv;
  int signo = 0;
};

// Every library the service calls, loaded before anything runs: a missing
// one is an answer at start, not a failure in the middle of a delivery.
Result<void> load_libraries() {
  using sys::SharedLibrary;
  return sys::load_shared_libraries({SharedLibrary::microhttpd, SharedLibrary::git2, SharedLibrary::sqlite3,
                                     SharedLibrary::crypto, SharedLibrary::curl});
}

// The API's bearer token, read as a bearer credential file is: never
// blocking on a FIFO, capped, no symbolic link followed, visible ASCII only.
Result<std::string> read_token(const std::string& path) {
  auto t = auth::read_bearer_token(path);
  if (!t) return fail(Errc::invalid_argument, "--api-token-file: " + t.error().message);
  if (t->size() < 16) {
    return fail(Errc::invalid_argument, "--api-token-file " + path + ": the token is shorter than 16 bytes");
  }
  return t;
}

// What the command line asks for, checked before anything is bound or
// opened: the root, every credential (its file loaded now, so a typo fails
// at start) and its scope, the token.
Result<ApiConfig> api_config(const ServiceOptions& o) {
  ApiConfig c;
  std::error_code ec;
  const auto root = std::filesystem::canonical(o.repo_root, ec);
  if (ec || !std::filesystem::is_directory(root, ec)) {
    return fail(Errc::invalid_argument, "--repo-root " + o.repo_root + " is not a directory");
  }
  c.repo_root = root.string();
  for (const auto& [name, spec] : o.credentials) {
    if (spec == "none") return fail(Errc::invalid_argument, "--credential " + name + ": none is not a credential");
    auto factory = auth::minter_factory(spec);
    if (!factory) return fail(Errc::invalid_argument, "--credential " + name + ": " + factory.error().message);
  }
  // Every credential names where it may be sent (credential_scope.hpp).
  auto credentials = service_credentials(o.credentials, o.credential_scopes);
  if (!credentials) return tl::unexpected(credentials.error());
  if (auto ok = load_ssh_keys(*credentials); !ok) return tl::unexpected(ok.error());
  c.credentials = std::move(*credentials);
  c.allow_http_loopback = o.allow_http_loopback;
  return c;
}

ExecutorOptions executor_options(const ServiceOptions& o, const std::string& journal, ReadBackFn read_back) {
  ExecutorOptions eo;
  // journal: the SQLite file (--journal, --state sqlite:FILE, or the
  // default).
  if (o.state) {
    eo.state = *o.state;
  } else {
    eo.journal = journal;
  }
  if (o.host_id) eo.host_id = *o.host_id;
  // Empty: the effective user's default lane directory, the one `push` and
  // `recover` use too (rule S1): never beside the journal, which may be
  // anywhere --journal says.
  if (o.lane_dir) eo.lane_dir = *o.lane_dir;
  eo.workers = o.workers;
  eo.warm_children = o.warm;
  eo.read_back = std::move(read_back);
  eo.lease_ttl = static_cast<MonoNs>(o.lease_ttl.count()) * 1'000'000;
  eo.lease_margin = static_cast<MonoNs>(o.lease_margin.count()) * 1'000'000;
  if (o.stop_bound) eo.reap_bound = eo.eof_bound = static_cast<MonoNs>(o.stop_bound->count()) * 1'000'000;
  // Deliveries (and the helpers sys::spawn starts for them) are this
  // process's only children: their orphans come back here and are claimed
  // before a stop is confirmed. Deliveries run side by side: a stray claim
  // tells their live children from orphans by sys::is_own_spawn, never by
  // the exit signal /proc shows (tests/integration/strays.cpp).
  eo.subreaper = true;
  eo.on_log = [](std::string_view line) { log_event(LogLevel::info, "supervisor", {{"message", std::string(line)}}); };
  eo.on_child_stderr = [](std::string_view text) {
    log_event(LogLevel::warn, "child_stderr", {{"text", std::string(text)}});
  };
  return eo;
}

// The last line and the exit code. A stop that could not be confirmed left
// work that may still run and a seat this process kept to the end: the exit
// code says so, as a push's does (kExitUnconfirmed), so a supervisor of the
// service sees it without reading the log.
int stopped(std::size_t live, std::uint64_t unconfirmed) {
  log_event(unconfirmed == 0 ? LogLevel::info : LogLevel::error, "stopped",
            {{"live", live}, {"unconfirmed", unconfirmed}});
  return unconfirmed == 0 ? 0 : kExitUnconfirmed;
}

// The drain: no new delivery; those not yet dispatched end
// cancelled_no_dispatch (a delivery is not started by a stopping service);
// the live ones run until the drain timeout; the rest are revoked; every
// stop is confirmed before this returns.
void drain(Deliveries& deliveries, const ServiceOptions& o) {
  deliveries.stop_accepting();
  deliveries.withdraw_queued("the service is stopping: a queued delivery is not started");
  log_event(LogLevel::info, "draining", {{"live", deliveries.live()}, {"drain_timeout_ms", o.drain_timeout.count()}});
  const auto until = std::chrono::steady_clock::now() + o.drain_timeout;
  if (!deliveries.wait_idle(until)) {
    log_event(LogLevel::warn, "drain_timeout", {{"revoking", deliveries.live()}});
    deliveries.revoke_all("the service is stopping (--drain-timeout passed)");
    // A revoked delivery ends only when its child's stop is confirmed (or
    // found unconfirmable, seat retained): exiting earlier would leave it
    // unfinished in the journal for recovery.
    (void)deliveries.wait_idle(std::chrono::steady_clock::now() + std::chrono::hours(24));
  }
}

Result<sys::ScopedFd> tcp_listener(const ServiceOptions& o) {
  if (!o.listen) return sys::ScopedFd();
  auto l = parse_listen(*o.listen);
  if (!l) return tl::unexpected(l.error());
  auto fd = sys::listen_loopback_tcp(l->first, l->second);
  if (!fd) return fd;
  // The bound port, for a caller that asked for port 0.
  auto port = sys::local_port(fd->get());
  if (!port) return tl::unexpected(port.error());
  log_event(LogLevel::info, "tcp_listening", {{"host", l->first}, {"port", *port}});
  return fd;
}

RegistryOptions registry_options(const ServiceOptions& o) {
  RegistryOptions ro;
  ro.max_queued = o.max_queued;
  ro.workers = o.workers;
  ro.ca_file = o.ca_file;
  if (o.known_hosts) {
    std::error_code ec;
    ro.known_hosts = std::filesystem::absolute(*o.known_hosts, ec).lexically_normal().string();
  }
  ro.allow_http_loopback = o.allow_http_loopback;
  return ro;
}

// Blocks until SIGTERM or SIGINT; returns which.
// The soft descriptor limit raised to the hard one (a service that holds
// thousands of connections must not stop at the common 1,024), and the
// connection cap of each listener that follows from it, logged.
unsigned connection_cap_from_fd_limit(unsigned listeners) {
  auto lim = sys::raise_fd_limit();
  if (!lim) {
    log_event(LogLevel::warn, "fd_limit", {{"message", lim.error().message}});
    return connection_cap(1024, listeners);
  }
  const unsigned cap = connection_cap(lim->soft, listeners);
  log_event(LogLevel::info, "fd_limit",
            {{"soft_before", lim->soft_before}, {"soft", lim->soft}, {"connection_cap", cap}});
  return cap;
}

HttpServerOptions http_options(const ServiceOptions& o, sys::ScopedFd unix_listener, sys::ScopedFd tcp_listener,
                               const std::string& token) {
  HttpServerOptions ho;
  ho.unix_listener = std::move(unix_listener);
  ho.tcp_listener = std::move(tcp_listener);
  ho.allow_uids = o.allow_uids.empty() ? std::vector<std::uint32_t>{sys::effective_uid()} : o.allow_uids;
  ho.allow_gids = o.allow_gids;
  ho.token = token;
  ho.connection_cap = connection_cap_from_fd_limit(ho.tcp_listener ? 2 : 1);
  return ho;
}

int wait_for_signal(StopSignal& stop) {
  std::unique_lock<std::mutex> lock(stop.mu);
  stop.cv.wait(lock, [&] { return stop.signo != 0; });
  return stop.signo;
}

}  // namespace

namespace {

// The registry's journal: the one the executor opens too (--state, else the SQLite file).
Result<std::unique_ptr<journal::Journal>> open_service_journal(const ServiceOptions& o, const std::string& path) {
  if (!o.state) return journal::open_sqlite(path);
  auto url = state::parse_state_url(*o.state);
  if (!url) return tl::unexpected(url.error());
  return journal::open_state(*url, "git-courier/" + (o.host_id ? *o.host_id : sys::host_name()) + "/" +
                                       std::to_string(sys::self_pid()) + "/api");
}

}  // namespace

int run_serve(const ServiceOptions& o, const std::string& journal_path, ReadBackFn read_back) {
  for (const auto& w : o.warnings) log_event(LogLevel::warn, "config_warning", {{"message", w}});
  if (auto libs = load_libraries(); !libs) {
    log_event(LogLevel::error, "library_missing", {{"message", libs.error().message}});
    return kExitRuntime;
  }
  // Signals become events before any thread starts (only the watcher sees them).
  StopSignal stop;
  auto watcher = sys::SignalWatcher::start([&stop](int signo) {
    if (signo == SIGHUP) {
      log_event(LogLevel::info, "signal_ignored", {{"signal", "SIGHUP"}});
      return;
    }
    std::lock_guard<std::mutex> lock(stop.mu);
    if (stop.signo == 0) stop.signo = signo;
    stop.cv.notify_all();
  });
  if (!watcher) return config_error("cannot watch signals: " + watcher.error().message);
  auto config = api_config(o);
  if (!config) return config_error(config.error().message);
  auto token = o.api_token_file ? read_token(*o.api_token_file) : Result<std::string>(std::string());
  if (!token) return config_error(token.error().message);
  auto socket = o.socket.empty() ? default_socket_path() : Result<std::string>(o.socket);
  if (!socket) return config_error(socket.error().message);
  const std::string socket_path = *socket;
  // From here every return removes the socket file this start bound (the
  // ServiceSocket's destructor, lock still held): a failed start, of
  // --listen say, leaves nothing at the path.
  auto sock = sys::bind_service_socket(socket_path);
  if (!sock) return config_error(sock.error().message);
  auto tcp = tcp_listener(o);
  if (!tcp) return config_error(tcp.error().message);
  auto journal = open_service_journal(o, journal_path);
  if (!journal) return config_error(journal.error().message);
  // Resume after a crash: the queued deliveries a previous service left,
  // found before the Executor's recovery finishes them (interrupted, none).
  auto left = find_left_behind(**journal);
  if (!left) return config_error(left.error().message);

  Metrics metrics;
  Deliveries deliveries(registry_options(o), std::move(*journal), metrics);
  auto executor = std::make_unique<Executor>(executor_options(o, journal_path, std::move(read_back)));
  deliveries.attach(executor.get());
  if (!left->empty()) {
    const std::size_t resumed = resume_left_behind(*left, deliveries, config->credentials, config->allow_http_loopback);
    log_event(LogLevel::info, "resume", {{"left_behind", left->size()}, {"resumed", resumed}});
  }

  Api api(*config, deliveries, metrics);
  auto http = HttpServer::start(http_options(o, std::move(sock->listener), std::move(*tcp), *token), api);
  if (!http) {
    log_event(LogLevel::error, "http_failed", {{"message", http.error().message}});
    return kExitRuntime;
  }
  log_event(
      LogLevel::info, "listening",
      {{"socket", socket_path},
       {"listen", o.listen ? nlohmann::json(*o.listen) : nlohmann::json(nullptr)},
       {"journal", o.state ? state::parse_state_url(*o.state).value_or(state::StateUrl{}).redacted : journal_path},
       {"lane_dir", executor->lane_dir()},
       {"workers", o.workers},
       {"warm", o.warm}});
  const int signo = wait_for_signal(stop);
  log_event(LogLevel::info, "stopping", {{"signal", signo == SIGINT ? "SIGINT" : "SIGTERM"}});
  drain(deliveries, o);
  // Every delivery has finished: its followers get the `finished` line
  // before the connections close (a stop mid-stream left them without it).
  if (!(*http)->finish_streams(kStreamEndBound)) log_event(LogLevel::warn, "streams_unfinished", {});
  (*http)->stop();
  // Read while the executor lives (the gauges ask it): every delivery has
  // finished, so the count is final.
  const std::uint64_t unconfirmed = deliveries.gauges().unconfirmed;
  executor.reset();  // joins its threads; every delivery has finished
  sys::remove_service_socket(*sock);
  return stopped(deliveries.live(), unconfirmed);
}

}  // namespace courier::service
