// service-connections.cpp — `git-courier serve` under a flood of
// connections (suite service-load): 2,000 idle loopback TCP connections
// without a token and 2,000 open event streams on the Unix socket, started
// with the common soft descriptor limit of 1,024; an authenticated /healthz
// and a submission keep answering within 100 ms, and the idle connections
// are closed after the short timeout of a connection nobody has vouched for.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "fixture_server.hpp"
#include "raw_http.hpp"
#include "service/http_server_mhd.hpp"
#include "service_support.hpp"
#include "support.hpp"
#include "sys/clock.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_service_connections {

using namespace courier;
using nlohmann::json;
using sys::kNsPerMs;

namespace {

constexpr int kIdle = 2000;
constexpr int kStreams = 2000;
constexpr int kTries = 100;
constexpr double kBoundMs = 100;  // the acceptance: p99 within 100 ms
// The soft limit most systems start a service with (the hard one is higher).
constexpr rlim_t kCommonSoftLimit = 1024;

using test::connect_tcp;
using test::connect_unix;
using test::percentile;
using test::readable_by;
using test::request_on;
using test::request_text;
using test::send_all;
using test::status_of;

// Sockets closed when the test ends, however it ends.
struct Sockets {
  std::vector<int> fds;
  ~Sockets() {
    for (int fd : fds) ::close(fd);
  }
};

// `n` connections from `open`, stopping at the first the service does not take.
template <class Open>
std::vector<int> open_many(int n, Open open) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i) {
    const int fd = open();
    if (fd < 0) break;
    out.push_back(fd);
  }
  return out;
}

// One request on a fresh TCP connection; its status (0: no answer in time).
int tcp_request(std::int64_t port, const std::string& method, const std::string& path, const std::string& bearer,
                const std::string& body = {}) {
  return status_of(request_on(connect_tcp(port), request_text(method, path, bearer, body)));
}

// Closed by the peer: readable with nothing to read (or reset).
bool closed_by_peer(int fd) {
  char c;
  const ssize_t n = ::recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

long open_fds(int pid) {
  long n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// The service started with the common soft limit (1,024), as a service
// manager or a login shell would start it; this process keeps its own
// limit raised (it holds 4,000 sockets itself).
std::unique_ptr<test::ServeProcess> serve_with_common_limit(const std::string& state, const std::string& root,
                                                            const std::vector<std::string>& args) {
  rlimit lim{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &lim) == 0);
  REQUIRE_MESSAGE(lim.rlim_max >= 2 * (kIdle + kStreams), "the hard descriptor limit is too low for this test");
  rlimit common = lim;
  common.rlim_cur = kCommonSoftLimit;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &common) == 0);
  auto svc = std::make_unique<test::ServeProcess>(state, root, args);
  lim.rlim_cur = lim.rlim_max;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &lim) == 0);
  return svc;
}

// A number field of the service's first log line of `event` (0: none).
std::int64_t logged(const test::ServeProcess& svc, const std::string& event, const std::string& field) {
  for (const auto& line : test::lines_of(svc.log())) {
    if (line.is_object() && line.value("event", "") == event) return line.value(field, std::int64_t{0});
  }
  return 0;
}

long count_logged(const test::ServeProcess& svc, const std::string& event) {
  const auto lines = test::lines_of(svc.log());
  return std::count_if(lines.begin(), lines.end(),
                       [&](const json& l) { return l.is_object() && l.value("event", "") == event; });
}

}  // namespace

TEST_SUITE("service-load") {
  TEST_CASE(
      "X-SVC3: with 2,000 idle TCP connections without a token and 2,000 open event streams, an authenticated /healthz "
      "and a submission answer within 100 ms (p99 of 100 each), and the idle connections are closed after "
      "kPreAuthTimeoutS") {
    test::TempDir dir;
    test::FixtureServer fx;
    fx.create_bare_repo("r");
    const std::string root = dir.path() + "/repos";
    std::filesystem::create_directories(root);
    const std::string source = root + "/source";
    const std::string tip = test::make_source_repo(source, 3);
    const std::string token = "load-token-0123456789abcdef";
    const std::string token_file = dir.path() + "/api-token";
    test::write_file(token_file, token + "\n");
    REQUIRE(::chmod(token_file.c_str(), 0600) == 0);
    auto svc =
        serve_with_common_limit(dir.path() + "/state", root,
                                {"--workers", "2", "--drain-timeout", "1s", "--max-queued", std::to_string(kTries + 10),
                                 "--listen", "127.0.0.1:0", "--api-token-file", token_file, "--ca-file", fx.ca_file()});
    REQUIRE_MESSAGE(svc->up(), svc->log());
    const std::int64_t port = logged(*svc, "tcp_listening", "port");
    REQUIRE_MESSAGE(port > 0, svc->log());

    // A delivery held at its advertisement: its event streams stay open.
    fx.hold(test::RequestMatch::next("GET", "info/refs"));
    const json held = {
        {"id", "held"}, {"repo", source}, {"remote", fx.url("r")}, {"ref", "refs/heads/main"}, {"oid", tip}};
    REQUIRE(tcp_request(port, "POST", "/v1/deliveries", token, held.dump()) == 202);
    REQUIRE(fx.wait_for_held(20'000).has_value());

    // 2,000 event streams, each with its response started (its first line read).
    Sockets stream_sockets{open_many(kStreams, [&] {
      const int fd = connect_unix(svc->socket());
      if (fd >= 0) send_all(fd, request_text("GET", "/v1/deliveries/held/events", "", ""));
      return fd;
    })};
    const std::vector<int>& streams = stream_sockets.fds;
    const auto streams_by = sys::mono_now_ns() + 20'000 * kNsPerMs;
    int started = 0;
    for (int fd : streams) {
      char buf[512];
      started += readable_by(fd, streams_by) && ::read(fd, buf, sizeof buf) > 0;
    }
    REQUIRE_MESSAGE(started == kStreams, started << " of " << kStreams << " event streams started");

    // 2,000 idle connections without a token (connected, nothing sent).
    const auto idle_opened = sys::mono_now_ns();
    Sockets idle_sockets{open_many(kIdle, [&] { return connect_tcp(port); })};
    const std::vector<int>& idle = idle_sockets.fds;
    REQUIRE_MESSAGE(idle.size() == kIdle, "the service took " << idle.size() << " idle connections");
    // The service holds them all (accepted, not left in the backlog).
    const bool held_all = test::wait_for_fact([&] { return open_fds(svc->pid()) >= kIdle + kStreams; }, 10'000, 10'000);
    REQUIRE_MESSAGE(held_all, "the service holds " << open_fds(svc->pid()) << " descriptors");
    const auto accepted_at = sys::mono_now_ns();
    const double accepted_ms = sys::ns_to_ms(accepted_at - idle_opened);

    std::vector<double> healthz;
    std::vector<double> submits;
    for (int i = 0; i < kTries; ++i) {
      const auto a = sys::mono_now_ns();
      const int st = tcp_request(port, "GET", "/healthz", token);
      healthz.push_back(sys::ns_to_ms(sys::mono_now_ns() - a));
      REQUIRE_MESSAGE(st == 200, "/healthz answered " << st);
    }
    for (int i = 0; i < kTries; ++i) {
      const json b = {{"id", "s-" + std::to_string(i)},
                      {"repo", source},
                      {"remote", fx.url("r")},
                      {"ref", "refs/heads/s-" + std::to_string(i)},
                      {"oid", tip}};
      const auto a = sys::mono_now_ns();
      const int st = tcp_request(port, "POST", "/v1/deliveries", token, b.dump());
      submits.push_back(sys::ns_to_ms(sys::mono_now_ns() - a));
      REQUIRE_MESSAGE(st == 202, "a submission answered " << st);
    }
    const double measured_ms = sys::ns_to_ms(sys::mono_now_ns() - idle_opened);
    // Every idle connection was still open through the measurement.
    const auto still_open = std::count_if(idle.begin(), idle.end(), [](int fd) { return !closed_by_peer(fd); });
    CHECK_MESSAGE(still_open == kIdle, "only " << still_open << " idle connections were open after the measurement ("
                                               << measured_ms << " ms after they were opened)");
    test::report("service connections", "idle connections accepted in", accepted_ms, "ms");
    test::report("service connections", "healthz p50", percentile(healthz, 0.5), "ms");
    test::report("service connections", "healthz p99", percentile(healthz, 0.99), "ms");
    test::report("service connections", "submit p50", percentile(submits, 0.5), "ms");
    test::report("service connections", "submit p99", percentile(submits, 0.99), "ms");
    CHECK_MESSAGE(percentile(healthz, 0.99) < kBoundMs, "healthz p99 " << percentile(healthz, 0.99) << " ms");
    CHECK_MESSAGE(percentile(submits, 0.99) < kBoundMs, "submit p99 " << percentile(submits, 0.99) << " ms");

    // The idle connections are closed kPreAuthTimeoutS after the service
    // accepted them (by accepted_at, all of them), within a second of the
    // timer's granularity and one of slack; the admitted event streams
    // stay open.
    const long bound_ms = (service::kPreAuthTimeoutS + 2) * 1000L;
    const bool all_closed =
        test::wait_for_fact([&] { return std::all_of(idle.begin(), idle.end(), closed_by_peer); },
                            bound_ms - static_cast<long>(sys::ns_to_ms(sys::mono_now_ns() - accepted_at)), 20'000);
    const double closed_ms = sys::ns_to_ms(sys::mono_now_ns() - accepted_at);
    test::report("service connections", "idle connections closed after (from all accepted)", closed_ms, "ms");
    CHECK_MESSAGE(all_closed, "idle connections still open " << closed_ms << " ms after they were all accepted");
    const auto streams_open = std::count_if(streams.begin(), streams.end(), [](int fd) { return !closed_by_peer(fd); });
    CHECK(streams_open == kStreams);
    fx.release();
    CHECK(svc->stop() == 0);
  }
}

TEST_SUITE("service-load") {
  TEST_CASE(
      "X-SVC3: past its connection cap the service answers 503 over_capacity with Retry-After at once rather than "
      "hanging, logs the refusals at most kRefusalLogsPerSecond a second, and serves again when connections close") {
    // A hard limit of 1,024 (set by the shell that starts it) makes the cap
    // small enough to reach.
    test::TempDir dir;
    const std::string root = dir.path() + "/repos";
    std::filesystem::create_directories(root);
    auto svc = std::make_unique<test::ServeProcess>(dir.path() + "/state", root, std::vector<std::string>{},
                                                    "ulimit -n " + std::to_string(kCommonSoftLimit) + "; ");
    REQUIRE_MESSAGE(svc->up(), svc->log());
    const std::int64_t cap = logged(*svc, "fd_limit", "connection_cap");
    CHECK(cap == service::connection_cap(kCommonSoftLimit, 1));
    REQUIRE(cap > 0);
    const auto get = [&] { return request_on(connect_unix(svc->socket()), request_text("GET", "/healthz", "", "")); };
    const long fds_before = open_fds(svc->pid());
    REQUIRE(status_of(get()) == 200);
    // The cap taken by idle connections (held by the service: its
    // descriptors). The service closes them kPreAuthTimeoutS after it took
    // them (X-SVC4), so on a slow machine the cap can be given back in the
    // middle of the refusals: then it is taken again, a bounded number of
    // times, and a 200 counts as wrong only while every idle connection is
    // still open.
    Sockets idle;
    const auto take_cap = [&] {
      // Again: the service has closed some of the last ones; wait until it
      // has closed them all, so that its descriptors count the new ones.
      REQUIRE(test::wait_for_fact([&] { return std::all_of(idle.fds.begin(), idle.fds.end(), closed_by_peer); },
                                  (service::kPreAuthTimeoutS + 2) * 1000L, 20'000));
      for (int fd : idle.fds) ::close(fd);
      idle.fds = open_many(static_cast<int>(cap), [&] { return connect_unix(svc->socket()); });
      REQUIRE(idle.fds.size() == static_cast<std::size_t>(cap));
      REQUIRE_MESSAGE(test::wait_for_fact([&] { return open_fds(svc->pid()) >= fds_before + cap; }, 4'000, 10'000),
                      "the service holds " << open_fds(svc->pid()) << " descriptors, " << fds_before << " before");
    };
    take_cap();
    const auto timed_out = [&] { return std::any_of(idle.fds.begin(), idle.fds.end(), closed_by_peer); };
    // Past it: 503 at once, 30 times within a second or two.
    constexpr int kRefused = 30;
    constexpr int kRetakes = 3;
    int retakes = 0;
    std::vector<double> ms;
    const auto refusals_from = sys::mono_now_ns();
    for (int i = 0; i < kRefused; ++i) {
      const auto a = sys::mono_now_ns();
      const std::string answer = get();
      const double took = sys::ns_to_ms(sys::mono_now_ns() - a);
      if (status_of(answer) == 200 && timed_out() && retakes < kRetakes) {
        MESSAGE("the idle connections timed out during the refusals; the cap is taken again");
        ++retakes;
        take_cap();
        --i;
        continue;
      }
      ms.push_back(took);
      REQUIRE_MESSAGE(status_of(answer) == 503, "past the cap: " << answer);
      CHECK(answer.find("over_capacity") != std::string::npos);
      CHECK(answer.find("Retry-After: 1") != std::string::npos);
    }
    test::report("service connection cap", "cap", static_cast<double>(cap), "connections");
    test::report("service connection cap", "503 answer max", percentile(ms, 1.0), "ms");
    // The refusals spanned this many seconds of the budget's clock (at
    // least the one they started in and the one they ended in).
    const long seconds = static_cast<long>((sys::mono_now_ns() - refusals_from) / (1000 * kNsPerMs)) + 2;
    // The idle ones gone, it serves again.
    for (int fd : idle.fds) ::close(fd);
    idle.fds.clear();
    CHECK(test::wait_for_fact([&] { return status_of(get()) == 200; }, 5'000, 20'000));
    CHECK(svc->stop() == 0);  // and its log read to the end
    const long lines = count_logged(*svc, "over_capacity");
    test::report("service connection cap", "over_capacity lines for 30 refusals", static_cast<double>(lines), "");
    CHECK(lines >= 1);
    CHECK(lines <= static_cast<long>(service::kRefusalLogsPerSecond) * seconds);
    CHECK(lines < kRefused);
  }

  TEST_CASE(
      "X-SVC3: a connection's memory is kConnectionMemory: a request whose headers take a quarter of it is served, "
      "one whose headers take all of it is refused 431 at once, and the service serves on") {
    test::TempDir dir;
    const std::string root = dir.path() + "/repos";
    std::filesystem::create_directories(root);
    test::ServeProcess svc(dir.path() + "/state", root, std::vector<std::string>{});
    REQUIRE_MESSAGE(svc.up(), svc.log());
    const auto with_header = [&](std::size_t bytes) {
      std::string text = request_text("GET", "/healthz");
      text.insert(text.find("\r\n") + 2, "X-Padding: " + std::string(bytes, 'a') + "\r\n");
      return status_of(request_on(connect_unix(svc.socket()), text));
    };
    CHECK(with_header(service::kConnectionMemory / 4) == 200);
    CHECK_MESSAGE(with_header(service::kConnectionMemory) == 431,
                  "headers larger than a connection's memory were read");
    CHECK(with_header(0) == 200);
  }
}

}  // namespace integration_service_connections
