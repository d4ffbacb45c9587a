// fixture-server.cpp — proves the fixture git server with the real git
// client: pushes over TLS and plain HTTP land in the bare repository, the
// throwaway CA is really what makes TLS verify, and each fault (hold,
// respond, close_after_headers, hold_response_end) is announced and
// journalled as documented.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "fixture_server.hpp"
#include "support.hpp"
#include "sys/clock.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_fixture_server {

using namespace courier;
using test::FixtureServer;
using test::RequestMatch;

namespace {

const std::string kReceivePack = "git-receive-pack";

std::vector<std::string> with_ca(const FixtureServer& s) { return {"GIT_SSL_CAINFO=" + s.ca_file()}; }

// `git push URL main:refs/heads/main` from `src`, certificate checks on.
test::GitResult push(const FixtureServer& s, const std::string& src, const std::string& repo,
                     const std::vector<std::string>& env, const std::vector<std::string>& config = {}) {
  std::vector<std::string> args = {"-c", "http.sslVerify=true"};
  args.insert(args.end(), config.begin(), config.end());
  for (const auto& a : {std::string("push"), s.url(repo), std::string("main:refs/heads/main")}) args.push_back(a);
  return test::git(args, src, env);
}

// The ref in the server's bare repository, or "" when it does not exist.
std::string server_ref(const FixtureServer& s, const std::string& repo, const std::string& ref = "refs/heads/main") {
  auto r = test::git({"--git-dir", s.repo_path(repo), "rev-parse", "--verify", "--quiet", ref});
  if (!r.ok()) return {};
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

const test::JournalEntry* find_entry(const std::vector<test::JournalEntry>& j, long request) {
  for (const auto& e : j) {
    if (e.request == request) return &e;
  }
  return nullptr;
}

bool has_fault(const test::JournalEntry& e, const std::string& fault) {
  return std::find(e.faults.begin(), e.faults.end(), fault) != e.faults.end();
}

// A receive-pack request body creating refs/heads/main at `tip` in an empty
// repository: one command with report-status, a flush, the pack.
std::string receive_pack_body(const std::string& src, const std::string& tip) {
  const std::string line = std::string(40, '0') + " " + tip + " refs/heads/main" + '\0' + "report-status\n";
  char len[5];
  std::snprintf(len, sizeof len, "%04zx", line.size() + 4);
  const auto pack = test::run({test::find_on_path("git"), "-C", src, "pack-objects", "--stdout", "--revs"}, tip + "\n",
                              test::Stdin::bytes, test::git_env());
  REQUIRE_MESSAGE(pack.exit_code == 0, pack.err);
  return std::string(len) + line + "0000" + pack.out;
}

// A plain TCP connection to the fixture on 127.0.0.1.
sys::ScopedFd connect_to(int port) {
  sys::ScopedFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(fd);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// An HTTP/1.1 response read so far, its chunked body decoded.
struct ChunkedSoFar {
  bool head_done = false;
  std::string head;
  std::string body;
  bool ended = false;  // the terminating 0-size chunk and its blank line arrived
};

ChunkedSoFar dechunk(const std::string& raw) {
  ChunkedSoFar d;
  const auto head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return d;
  d.head_done = true;
  d.head = raw.substr(0, head_end);
  std::size_t pos = head_end + 4;
  for (;;) {
    const auto line_end = raw.find("\r\n", pos);
    if (line_end == std::string::npos) return d;
    const std::size_t n = std::stoul(raw.substr(pos, line_end - pos), nullptr, 16);
    if (n == 0) {
      d.ended = raw.compare(line_end + 2, 2, "\r\n") == 0;
      return d;
    }
    if (raw.size() < line_end + 2 + n + 2) return d;
    d.body += raw.substr(line_end + 2, n);
    pos = line_end + 2 + n + 2;
  }
}

// Reads from fd into `got` until done(got) or EOF or timeout_ms passed
// without done; returns done(got).
template <typename Done>
bool read_until(int fd, std::string& got, Done done, long timeout_ms) {
  const auto until = sys::mono_now_ns() + timeout_ms * sys::kNsPerMs;
  while (!done(got)) {
    const auto left_ms = (until - sys::mono_now_ns()) / sys::kNsPerMs;
    if (left_ms <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left_ms)) <= 0) continue;
    char buf[65536];
    auto n = sys::read_some(fd, buf, sizeof buf);
    if (!n || *n == 0) break;
    got.append(buf, *n);
  }
  return done(got);
}

}  // namespace

TEST_SUITE("fixture") {
  TEST_CASE("make_source_repo is deterministic: the same call makes the same commits") {
    test::TempDir d;
    const std::string a = test::make_source_repo(d.path() + "/a", 3);
    const std::string b = test::make_source_repo(d.path() + "/b", 3);
    CHECK(a.size() == 40);
    CHECK(a == b);
    CHECK(test::git_ok({"rev-list", "--count", "HEAD"}, d.path() + "/a") == "3");
  }

  TEST_CASE("a git push over TLS, trusting the fixture's CA, lands in the empty bare repository") {
    FixtureServer s;
    REQUIRE(s.port() > 0);
    REQUIRE(std::filesystem::exists(s.ca_file()));
    CHECK(s.url("r") == "https://127.0.0.1:" + std::to_string(s.port()) + "/r.git");
    s.create_bare_repo("r");
    const std::string src = s.scratch_dir() + "/src";
    const std::string tip = test::make_source_repo(src, 3);
    CHECK(server_ref(s, "r").empty());

    const auto t0 = sys::mono_now_ns();
    const auto r = push(s, src, "r", with_ca(s));
    test::report("fixture", "git push of 3 commits over TLS", sys::ns_to_ms(sys::mono_now_ns() - t0), "ms");
    REQUIRE_MESSAGE(r.ok(), r.err, "\nserver log:\n", s.log());
    CHECK(server_ref(s, "r") == tip);
    const auto fsck = test::git({"--git-dir", s.repo_path("r"), "fsck", "--strict"});
    CHECK_MESSAGE(fsck.ok(), fsck.err);

    // count: one push is one advertisement and one receive-pack at a time.
    const auto c = s.count();
    CHECK(c.count("GET /r.git/info/refs") == 1);
    CHECK(c.count("POST /r.git/git-receive-pack") == 1);
    CHECK(c.peak_receive_pack == 1);
    CHECK(c.active_receive_pack == 0);
    CHECK(c.held.empty());

    // The journal shows both requests, complete, answered 200.
    const auto j = s.journal();
    REQUIRE(j.size() == 2);
    CHECK(j[0].method == "GET");
    CHECK(j[0].target == "/r.git/info/refs?service=git-receive-pack");
    CHECK(j[1].method == "POST");
    CHECK(j[1].path == "/r.git/git-receive-pack");
    CHECK(j[1].body_bytes > 0);
    CHECK(j[1].header("Content-Type") == std::optional<std::string>("application/x-git-receive-pack-request"));
    for (const auto& e : j) {
      CHECK(e.status == std::optional<int>(200));
      REQUIRE(e.end_ns.has_value());
      CHECK(*e.end_ns >= e.start_ns);
      CHECK(e.start_ns >= t0);  // the server's clock is this process's CLOCK_MONOTONIC
      CHECK(e.faults.empty());
    }
  }

  TEST_CASE("a git push that does not trust the fixture's CA fails with a certificate error") {
    FixtureServer s;
    s.create_bare_repo("r");
    const std::string src = s.scratch_dir() + "/src";
    test::make_source_repo(src, 1);
    const auto r = push(s, src, "r", {});
    CHECK_FALSE(r.ok());
    CHECK_MESSAGE(r.err.find("certificate") != std::string::npos, r.err);
    CHECK(server_ref(s, "r").empty());
    // No HTTP request got through; the rejected connection is visible.
    const auto c = s.count();
    CHECK(c.total == 0);
    CHECK(c.handshake_failures + c.empty_connections >= 1);
  }

  TEST_CASE("a held receive-pack POST is announced before the backend runs, and the push completes after release") {
    FixtureServer s;
    s.create_bare_repo("r");
    const std::string src = s.scratch_dir() + "/src";
    const std::string tip = test::make_source_repo(src, 2);
    s.hold(RequestMatch::next("POST", kReceivePack));

    test::GitResult result;
    std::thread pusher([&] { result = push(s, src, "r", with_ca(s)); });
    const auto held = s.wait_for_held(30'000);
    if (!held) s.release();  // do not leave the pusher waiting on a failed check
    REQUIRE_MESSAGE(held.has_value(), "no held event; server log:\n", s.log());
    CHECK(held->method == "POST");
    CHECK(held->path == "/r.git/git-receive-pack");

    // While held: the body is in, the backend has not run, the ref is absent.
    CHECK(server_ref(s, "r").empty());
    const auto c = s.count();
    CHECK(c.held == std::vector<long>{held->request});
    CHECK(c.active_receive_pack == 1);
    const auto j = s.journal();
    const auto* e = find_entry(j, held->request);
    REQUIRE(e != nullptr);
    CHECK(e->body_bytes > 0);
    CHECK_FALSE(e->end_ns.has_value());
    CHECK_FALSE(e->status.has_value());

    CHECK(s.release(held->request) == std::vector<long>{held->request});
    pusher.join();
    CHECK_MESSAGE(result.ok(), result.err);
    CHECK(server_ref(s, "r") == tip);
    const auto after = s.journal();
    const auto* done = find_entry(after, held->request);
    REQUIRE(done != nullptr);
    CHECK(has_fault(*done, "hold"));
    CHECK(done->status == std::optional<int>(200));
    CHECK(s.count().peak_receive_pack == 1);
  }

  TEST_CASE("respond 302 to the receive-pack POST makes git fail, and the journal shows the redirect") {
    FixtureServer s;
    s.create_bare_repo("r");
    const std::string src = s.scratch_dir() + "/src";
    test::make_source_repo(src, 1);
    s.respond(RequestMatch::next("POST", kReceivePack), 302, s.url("elsewhere") + "/git-receive-pack");
    const auto r = push(s, src, "r", with_ca(s));
    CHECK_FALSE(r.ok());
    MESSAGE("git said: " << r.err);
    CHECK(server_ref(s, "r").empty());
    const auto j = s.journal();
    const auto redirected = std::find_if(j.begin(), j.end(), [](const auto& e) { return e.status == 302; });
    REQUIRE(redirected != j.end());
    CHECK(redirected->method == "POST");
    CHECK(redirected->path == "/r.git/git-receive-pack");
    CHECK(has_fault(*redirected, "respond"));
    // git does not follow a redirect of a POST: nothing reached the Location.
    for (const auto& e : j) CHECK(e.path.find("elsewhere") == std::string::npos);
  }

  TEST_CASE("close_after_headers with run_backend: the ref is updated although git saw the connection cut") {
    FixtureServer s;
    s.create_bare_repo("r");
    const std::string src = s.scratch_dir() + "/src";
    const std::string tip = test::make_source_repo(src, 1);
    s.close_after_headers(RequestMatch::next("POST", kReceivePack), test::CloseMode::headers, true);
    const auto r = push(s, src, "r", with_ca(s));
    CHECK_FALSE(r.ok());
    MESSAGE("git said: " << r.err);
    CHECK(server_ref(s, "r") == tip);
    const auto j = s.journal();
    REQUIRE(j.size() == 2);
    CHECK(has_fault(j[1], "close_after_headers"));
  }

  TEST_CASE("close_after_headers without a response: git fails, nothing is applied") {
    FixtureServer s;
    s.create_bare_repo("r");
    const std::string src = s.scratch_dir() + "/src";
    test::make_source_repo(src, 1);
    s.close_after_headers(RequestMatch::next("GET", "info/refs"), test::CloseMode::none);
    const auto r = push(s, src, "r", with_ca(s));
    CHECK_FALSE(r.ok());
    CHECK(server_ref(s, "r").empty());
    const auto j = s.journal();
    REQUIRE(j.size() == 1);
    CHECK_FALSE(j[0].status.has_value());
    CHECK(has_fault(j[0], "close_after_headers"));
    CHECK(s.reset_faults() == 0);  // the one-shot rule was used up
  }

  TEST_CASE("a chunked request body (git above its postBuffer) is read in full") {
    FixtureServer s;
    s.create_bare_repo("r");
    const std::string src = s.scratch_dir() + "/src";
    test::make_source_repo(src, 1);
    // Incompressible content, so the pack is larger than the post buffer.
    std::string blob(256 * 1024, '\0');
    std::uint32_t x = 2463534242u;
    for (auto& ch : blob) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      ch = static_cast<char>(x & 0xFF);
    }
    std::ofstream(src + "/blob.bin", std::ios::binary) << blob;
    test::git_ok({"add", "blob.bin"}, src);
    test::git_ok({"commit", "-q", "-m", "blob"}, src);
    const std::string tip = test::git_ok({"rev-parse", "HEAD"}, src);
    const auto r = push(s, src, "r", with_ca(s), {"-c", "http.postBuffer=65536"});
    REQUIRE_MESSAGE(r.ok(), r.err, "\nserver log:\n", s.log());
    CHECK(server_ref(s, "r") == tip);
    const auto j = s.journal();
    const auto chunked = std::find_if(j.begin(), j.end(), [](const auto& e) { return e.chunked; });
    REQUIRE(chunked != j.end());
    CHECK(chunked->path == "/r.git/git-receive-pack");
    CHECK(chunked->body_bytes > 256 * 1024);
    CHECK(s.count().peak_receive_pack == 1);
  }

  TEST_CASE("plain-http mode serves the same pushes without TLS") {
    test::FixtureOptions o;
    o.plain_http = true;
    FixtureServer s(o);
    CHECK(s.ca_file().empty());
    CHECK(s.url("r") == "http://127.0.0.1:" + std::to_string(s.port()) + "/r.git");
    s.create_bare_repo("r");
    const std::string src = s.scratch_dir() + "/src";
    const std::string tip = test::make_source_repo(src, 2);
    const auto r = push(s, src, "r", {});
    REQUIRE_MESSAGE(r.ok(), r.err, "\nserver log:\n", s.log());
    CHECK(server_ref(s, "r") == tip);
    CHECK(s.count().peak_receive_pack == 1);
  }

  TEST_CASE(
      "hold_response_end: the backend runs, the whole body arrives chunked, its end only after release; the ref "
      "is updated before") {
    test::FixtureOptions o;
    o.plain_http = true;  // a raw socket speaks to it
    FixtureServer s(o);
    s.create_bare_repo("r");
    const std::string src = s.scratch_dir() + "/src";
    const std::string tip = test::make_source_repo(src, 2);
    s.hold_response_end(RequestMatch::next("POST", kReceivePack));
    const std::string body = receive_pack_body(src, tip);
    const auto fd = connect_to(s.port());
    const std::string head =
        "POST /r.git/git-receive-pack HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/x-git-receive-pack-request\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n";
    REQUIRE(sys::write_all(fd.get(), (head + body).data(), head.size() + body.size()));
    const auto held = s.wait_for_held(30'000);
    REQUIRE_MESSAGE(held.has_value(), "no held event; server log:\n", s.log());
    CHECK(held->path == "/r.git/git-receive-pack");
    // Held: the backend is done (the ref is moved) and the report is out.
    CHECK(server_ref(s, "r") == tip);
    CHECK(s.count().held == std::vector<long>{held->request});
    std::string got;
    const std::string report = "000eunpack ok\n0017ok refs/heads/main\n0000";
    CHECK_MESSAGE(read_until(
                      fd.get(), got, [&](const std::string& g) { return dechunk(g).body == report; }, 5'000),
                  got);
    const auto so_far = dechunk(got);
    CHECK(so_far.head.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(so_far.head.find("Transfer-Encoding: chunked") != std::string::npos);
    // A bounded look for the end: it must not come while held.
    CHECK_FALSE(read_until(
        fd.get(), got, [](const std::string& g) { return dechunk(g).ended; }, 300));
    {
      const auto j = s.journal();
      const auto* e = find_entry(j, held->request);
      REQUIRE(e != nullptr);
      CHECK(e->status == std::optional<int>(200));
      CHECK(has_fault(*e, "hold_response_end"));
      CHECK_FALSE(e->end_ns.has_value());
    }
    CHECK(s.release(held->request) == std::vector<long>{held->request});
    CHECK(read_until(
        fd.get(), got, [](const std::string& g) { return dechunk(g).ended; }, 5'000));
    CHECK(dechunk(got).body == report);
    CHECK(s.count().held.empty());
    CHECK(s.count().active_receive_pack == 0);
    const auto j = s.journal();
    REQUIRE(j.size() == 1);
    CHECK(j[0].end_ns.has_value());
    CHECK(s.reset_faults() == 0);  // the one-shot rule was used up
  }

  TEST_CASE("shutdown with a request still held drops it, exits 0 and leaves no process behind") {
    auto s = std::make_unique<FixtureServer>();
    s->create_bare_repo("r");
    s->hold(RequestMatch::any());
    test::GitResult result;
    std::thread client([&] { result = test::git({"ls-remote", s->url("r")}, {}, with_ca(*s)); });
    const auto held = s->wait_for_held(30'000);
    CHECK(held.has_value());
    const pid_t pid = s->pid();
    CHECK(s->shutdown() == 0);
    client.join();
    CHECK_FALSE(result.ok());
    errno = 0;
    CHECK(::kill(pid, 0) == -1);
    CHECK(errno == ESRCH);
    s.reset();
  }

  TEST_CASE("leak check: a fixture server and the pushes it served leave no child and no descriptor behind") {
    // Measured around this test rather than against the program's start, so
    // descriptors other suites keep on purpose are not counted here.
    const auto fds_before = sys::open_fds();
    {
      FixtureServer s;
      s.create_bare_repo("r");
      const std::string src = s.scratch_dir() + "/src";
      test::make_source_repo(src, 1);
      s.hold(RequestMatch::next("POST", kReceivePack));
      test::GitResult result;
      std::thread pusher([&] { result = push(s, src, "r", with_ca(s)); });
      const auto held = s.wait_for_held(30'000);
      s.release();
      pusher.join();
      CHECK(held.has_value());
      CHECK_MESSAGE(result.ok(), result.err);
    }
    CHECK(sys::open_fds() == fds_before);
    CHECK(test::children_of_self().empty());
    CHECK_FALSE(sys::has_unreaped_child());
  }
}

}  // namespace integration_fixture_server
