// cli-proxy.cpp — the shipped CLI with git's trust and proxy settings,
// against nginx + git http-backend over TLS, side by side with git itself:
// GIT_SSL_CAINFO, http.sslCAInfo and http.<url>.sslCAInfo trusted as git
// trusts them; a push through a CONNECT proxy (fixtures/connect_proxy.py)
// opening one tunnel per leg; NO_PROXY; http.proxy over the environment;
// proxy credentials that reach the proxy and nothing else; refused proxy
// kinds; a 407; and the origin's name still verified through the tunnel.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "nginx_server.hpp"
#include "push_setup.hpp"
#include "support.hpp"
#include "sys/clock.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli_proxy {

using namespace courier;
using nlohmann::json;

namespace {

// The CONNECT proxy fixture: started, its port read from its first line,
// its record of requests read back from the file it flushes before it
// answers each one (so a finished client's tunnels are all there).
class ConnectProxy {
 public:
  explicit ConnectProxy(const test::TempDir& dir, const std::vector<std::string>& extra = {})
      : record_(dir.path() + "/proxy-" + std::to_string(++instances_) + ".jsonl"), process_(argv(extra)) {
    const std::string ready = process_.wait_line("ready ", 10'000);
    REQUIRE_MESSAGE(!ready.empty(), "the CONNECT proxy did not start");
    port_ = std::stoi(ready.substr(6));
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string url_with(const std::string& userinfo) const {
    return "http://" + userinfo + "@127.0.0.1:" + std::to_string(port_);
  }
  std::vector<json> records() const {
    std::vector<json> out;
    std::string text;
    try {
      text = test::read_file(record_);
    } catch (...) {
      return out;  // nothing recorded yet
    }
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t nl = text.find('\n', at);
      out.push_back(json::parse(text.substr(at, nl - at)));
      at = nl + 1;
    }
    return out;
  }

 private:
  std::vector<std::string> argv(const std::vector<std::string>& extra) const {
    std::vector<std::string> a = {"/usr/bin/python3", COURIER_CONNECT_PROXY, "--record", record_};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  static inline int instances_ = 0;
  std::string record_;
  test::LineProcess process_;
  int port_ = 0;
};

// A source repository, a lane directory and a configuration-free
// environment (no system or global git configuration) shared by the CLI and
// by git.
struct Setup {
  test::TempDir dir;
  std::string source;
  std::string tip;
  std::string lanes;

  Setup() {
    source = dir.path() + "/source";
    tip = test::make_source_repo(source, 2);
    lanes = dir.path() + "/lanes";
  }

  void config(const std::string& key, const std::string& value) const {
    test::git_ok({"config", "--add", key, value}, source);
  }

  std::vector<std::string> env(const std::vector<std::string>& extra) const {
    auto e = test::git_env(extra);
    e.push_back("LANG=C");
    return e;
  }

  test::RunResult push(const std::string& remote, const std::vector<std::string>& env_extra,
                       std::vector<std::string> flags = {}) const {
    std::vector<std::string> a = {COURIER_BINARY,    "push",  "--repo", source,       "--remote", remote, "--ref",
                                  "refs/heads/main", "--rev", "HEAD",   "--lane-dir", lanes};
    if (std::find(flags.begin(), flags.end(), "--journal") == flags.end()) a.push_back("--no-journal");
    a.insert(a.end(), flags.begin(), flags.end());
    return test::run(a, {}, test::Stdin::bytes, env(env_extra));
  }

  // `git ls-remote` in the source repository, so that it reads the same
  // repository configuration as the CLI.
  test::RunResult ls_remote(const std::string& remote, const std::vector<std::string>& env_extra) const {
    return test::run({test::find_on_path("git"), "-C", source, "ls-remote", remote}, {}, test::Stdin::bytes,
                     env(env_extra));
  }
};

std::string ref_of(const std::string& git_dir) {
  auto r = test::git({"--git-dir", git_dir, "rev-parse", "--verify", "-q", "refs/heads/main"});
  return r.ok() ? r.out.substr(0, 40) : std::string();
}

// https://localhost:P/<name>.git: a name in the server's certificate that
// the proxy, not this process, resolves.
std::string by_name(const test::NginxServer& nginx, const std::string& host, const std::string& repo) {
  return "https://" + host + ":" + std::to_string(nginx.port()) + "/" + repo + ".git";
}

// A CA that signed nothing this server presents.
std::string unrelated_ca(const test::TempDir& dir) {
  const std::string key = dir.path() + "/other-ca.key";
  const std::string pem = dir.path() + "/other-ca.pem";
  auto r = test::run({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                      "-nodes", "-keyout", key, "-out", pem, "-subj", "/CN=unrelated test CA", "-days", "2"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return pem;
}

#define SKIP_WITHOUT_NGINX(nginx)                         \
  if (!(nginx).available()) {                             \
    MESSAGE("skipped: " << (nginx).unavailable_reason()); \
    return;                                               \
  }

}  // namespace

TEST_SUITE("cli-proxy") {
  TEST_CASE("T1: GIT_SSL_CAINFO, http.sslCAInfo and http.<url>.sslCAInfo are trusted exactly when git trusts them") {
    test::NginxServer nginx;
    SKIP_WITHOUT_NGINX(nginx);
    nginx.create_bare_repo("trust");
    const std::string remote = nginx.url("trust");
    test::TempDir ca_dir;
    const std::string other = unrelated_ca(ca_dir);
    struct Row {
      std::string name;
      std::vector<std::pair<std::string, std::string>> config;
      std::vector<std::string> env;
      bool trusted;
    };
    const std::vector<Row> rows = {
        {"GIT_SSL_CAINFO", {}, {"GIT_SSL_CAINFO=" + nginx.ca_file()}, true},
        {"http.sslCAInfo", {{"http.sslCAInfo", nginx.ca_file()}}, {}, true},
        {"http.<url>.sslCAInfo", {{"http." + nginx.url_base() + ".sslCAInfo", nginx.ca_file()}}, {}, true},
        {"nothing (the system store)", {}, {}, false},
        {"http.<other url>.sslCAInfo", {{"http.https://elsewhere.test.sslCAInfo", nginx.ca_file()}}, {}, false},
        {"GIT_SSL_CAINFO over http.sslCAInfo",
         {{"http.sslCAInfo", nginx.ca_file()}},
         {"GIT_SSL_CAINFO=" + other},
         false},
        {"http.<url>.sslCAInfo over http.sslCAInfo",
         {{"http.sslCAInfo", other}, {"http." + remote + ".sslCAInfo", nginx.ca_file()}},
         {},
         true},
    };
    for (const auto& row : rows) {
      CAPTURE(row.name);
      Setup s;
      for (const auto& [k, v] : row.config) s.config(k, v);
      auto git = s.ls_remote(remote, row.env);
      auto ours = s.push(remote, row.env);
      CHECK_MESSAGE((git.exit_code == 0) == row.trusted, git.err);
      CHECK_MESSAGE((ours.exit_code == cli::kExitOk) == row.trusted, ours.err);
      if (!row.trusted) {
        CHECK(ours.exit_code == cli::kExitFailed);
        CHECK(ours.err.find("transport_failed") != std::string::npos);
      }
    }
    // --ca-file pins, whatever git's settings say.
    Setup s;
    s.config("http.sslCAInfo", other);
    auto pinned = s.push(remote, {"GIT_SSL_CAINFO=" + other}, {"--ca-file", nginx.ca_file()});
    CHECK_MESSAGE(pinned.exit_code == cli::kExitOk, pinned.err);
  }

  TEST_CASE("T1: a push through a CONNECT proxy opens exactly one tunnel per leg, as git does one, and is read back") {
    test::NginxServer nginx;
    SKIP_WITHOUT_NGINX(nginx);
    nginx.create_bare_repo("tunnel");
    Setup s;
    ConnectProxy proxy(s.dir, {"--map", "localhost"});
    const std::string remote = by_name(nginx, "localhost", "tunnel");
    const std::vector<std::string> env = {"HTTPS_PROXY=" + proxy.url()};
    auto r = s.push(remote, env, {"--ca-file", nginx.ca_file(), "--json"});
    REQUIRE_MESSAGE(r.exit_code == cli::kExitOk, r.err);
    CHECK(json::parse(r.out)["outcome"] == "delivered");
    CHECK(ref_of(nginx.repo_path("tunnel")) == s.tip);
    const auto tunnels = proxy.records();
    CHECK(tunnels.size() == 2);  // the GET and the POST, each on a fresh tunnel
    for (const auto& t : tunnels) {
      CHECK(t["method"] == "CONNECT");
      CHECK(t["target"] == "localhost:" + std::to_string(nginx.port()));
      CHECK(t["answer"] == 200);
      CHECK(t["proxy_authorization"].is_null());
      // The origin's headers (Authorization among them) never go to the proxy.
      for (const auto& h : t["headers"]) {
        const std::string name = h.get<std::string>();
        const bool origin_only = name == "Authorization" || name == "Pragma" || name == "Accept";
        CHECK_MESSAGE(!origin_only, (std::string("an origin header went to the proxy: ") + name));
      }
    }
    test::report("T1 CONNECT proxy", "tunnels for one push", static_cast<double>(tunnels.size()), "tunnels");
    // git, in the same environment, goes through the same proxy.
    auto git = s.ls_remote(remote, {"HTTPS_PROXY=" + proxy.url(), "GIT_SSL_CAINFO=" + nginx.ca_file()});
    CHECK_MESSAGE(git.exit_code == 0, git.err);
    CHECK(git.out.find(s.tip) != std::string::npos);
    CHECK(proxy.records().size() == 3);
  }

  TEST_CASE("T1: NO_PROXY exempts the remote from the proxy, for the CLI as for git") {
    test::NginxServer nginx;
    SKIP_WITHOUT_NGINX(nginx);
    nginx.create_bare_repo("noproxy");
    Setup s;
    ConnectProxy proxy(s.dir, {"--map", "localhost"});
    const std::string remote = by_name(nginx, "localhost", "noproxy");
    const std::vector<std::string> env = {"HTTPS_PROXY=" + proxy.url(), "NO_PROXY=localhost",
                                          "GIT_SSL_CAINFO=" + nginx.ca_file()};
    auto r = s.push(remote, env);
    CHECK_MESSAGE(r.exit_code == cli::kExitOk, r.err);
    CHECK(ref_of(nginx.repo_path("noproxy")) == s.tip);
    auto git = s.ls_remote(remote, env);
    CHECK_MESSAGE(git.exit_code == 0, git.err);
    CHECK(proxy.records().empty());
  }

  TEST_CASE("T1: http.proxy overrides HTTPS_PROXY, and an empty http.proxy turns proxying off, as in git") {
    test::NginxServer nginx;
    SKIP_WITHOUT_NGINX(nginx);
    nginx.create_bare_repo("precedence");
    Setup s;
    ConnectProxy configured(s.dir, {"--map", "localhost"});
    ConnectProxy from_env(s.dir, {"--map", "localhost"});
    const std::string remote = by_name(nginx, "localhost", "precedence");
    const std::vector<std::string> env = {"HTTPS_PROXY=" + from_env.url(), "GIT_SSL_CAINFO=" + nginx.ca_file()};
    s.config("http.proxy", configured.url());
    auto r = s.push(remote, env);
    CHECK_MESSAGE(r.exit_code == cli::kExitOk, r.err);
    auto git = s.ls_remote(remote, env);
    CHECK_MESSAGE(git.exit_code == 0, git.err);
    CHECK(configured.records().size() == 3);  // our two legs and git's one
    CHECK(from_env.records().empty());
    test::git_ok({"config", "--replace-all", "http.proxy", ""}, s.source);
    auto direct = s.push(remote, env);
    CHECK_MESSAGE(direct.exit_code == cli::kExitOk, direct.err);
    CHECK(s.ls_remote(remote, env).exit_code == 0);
    CHECK(configured.records().size() == 3);
    CHECK(from_env.records().empty());
  }

  TEST_CASE("T1: --remote NAME brings remote.NAME.proxy, which overrides http.proxy, as git's push through it does") {
    test::NginxServer nginx;
    SKIP_WITHOUT_NGINX(nginx);
    nginx.create_bare_repo("named");
    Setup s;
    ConnectProxy per_remote(s.dir, {"--map", "localhost"});
    ConnectProxy general(s.dir, {"--map", "localhost"});
    const std::string remote = by_name(nginx, "localhost", "named");
    const std::vector<std::string> env = {"GIT_SSL_CAINFO=" + nginx.ca_file()};
    s.config("remote.origin.url", remote);
    s.config("remote.origin.proxy", per_remote.url());
    s.config("http.proxy", general.url());
    auto r = s.push("origin", env);
    CHECK_MESSAGE(r.exit_code == cli::kExitOk, r.err);
    CHECK_MESSAGE(per_remote.records().size() == 2, "--remote origin did not tunnel through remote.origin.proxy");
    CHECK(general.records().empty());
    // git, asked for the same remote by name, takes the same proxy.
    CHECK(s.ls_remote("origin", env).exit_code == 0);
    CHECK(per_remote.records().size() == 3);
    CHECK(general.records().empty());
    // The same URL given as a URL has no remote name: http.proxy applies
    // (one tunnel: the ref is already there, so no POST).
    auto by_url = s.push(remote, env);
    CHECK_MESSAGE(by_url.exit_code == cli::kExitOk, by_url.err);
    CHECK(general.records().size() == 1);
    CHECK(per_remote.records().size() == 3);
  }

  TEST_CASE("T1 A1: proxy credentials reach the proxy as preemptive Basic and appear nowhere else") {
    test::NginxServer nginx;
    SKIP_WITHOUT_NGINX(nginx);
    nginx.create_bare_repo("creds");
    Setup s;
    ConnectProxy proxy(s.dir, {"--map", "localhost", "--basic", "courier:s3cr%t"});
    const std::string remote = by_name(nginx, "localhost", "creds");
    const std::string journal = s.dir.path() + "/journal.db";
    auto r = s.push(remote, {"HTTPS_PROXY=" + proxy.url_with("courier:s3cr%25t")},
                    {"--ca-file", nginx.ca_file(), "--json", "--journal", journal});
    CHECK_MESSAGE(r.exit_code == cli::kExitOk, r.err);
    CHECK(ref_of(nginx.repo_path("creds")) == s.tip);
    const auto tunnels = proxy.records();
    REQUIRE(tunnels.size() == 2);
    for (const auto& t : tunnels) {
      CHECK(t["answer"] == 200);
      CHECK(t["proxy_authorization"] == "Basic Y291cmllcjpzM2NyJXQ=");  // base64("courier:s3cr%t")
    }
    for (const std::string& secret : {std::string("s3cr"), std::string("Y291cmllcjpzM2NyJXQ")}) {
      CHECK(r.out.find(secret) == std::string::npos);
      CHECK(r.err.find(secret) == std::string::npos);
      for (const std::string suffix : {"", "-wal"}) {
        std::string bytes;
        try {
          bytes = test::read_file(journal + suffix);
        } catch (...) {
          continue;
        }
        CHECK_MESSAGE(bytes.find(secret) == std::string::npos, ("found in the journal" + suffix));
      }
    }
  }

  TEST_CASE("T1: a proxy answering 407 ends the delivery with a clear message and nothing pushed") {
    test::NginxServer nginx;
    SKIP_WITHOUT_NGINX(nginx);
    nginx.create_bare_repo("denied");
    Setup s;
    ConnectProxy proxy(s.dir, {"--map", "localhost", "--basic", "courier:right"});
    const std::string remote = by_name(nginx, "localhost", "denied");
    for (const std::string& proxy_url : {proxy.url(), proxy.url_with("courier:wrong")}) {
      auto r = s.push(remote, {"HTTPS_PROXY=" + proxy_url}, {"--ca-file", nginx.ca_file(), "--json"});
      CHECK(r.exit_code == cli::kExitFailed);
      CHECK(json::parse(r.out)["outcome"] == "transport_failed");
      CHECK_MESSAGE(r.err.find("407 (proxy authentication required)") != std::string::npos, r.err);
      CHECK(r.err.find("wrong") == std::string::npos);
    }
    CHECK(ref_of(nginx.repo_path("denied")).empty());
    const auto tried = proxy.records();
    REQUIRE(tried.size() == 2);  // one refused CONNECT per push: the GET never began
    for (const auto& t : tried) CHECK(t["answer"] == 407);
  }

  TEST_CASE("T1: a proxy asking for credentials with 401 to CONNECT (as tinyproxy does) gets the 407's hint") {
    Setup s;
    ConnectProxy proxy(s.dir, {"--map", "localhost", "--basic", "courier:right", "--ask-with-401"});
    // The tunnel is refused before any byte reaches an origin: none listens.
    auto r = s.push("https://localhost:9/asked.git", {"HTTPS_PROXY=" + proxy.url()}, {"--json"});
    CHECK(r.exit_code == cli::kExitFailed);
    CHECK(json::parse(r.out)["outcome"] == "transport_failed");
    CHECK_MESSAGE(r.err.find("401 (authentication required) to CONNECT") != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find("give its credentials in the proxy URL") != std::string::npos, r.err);
    const auto tried = proxy.records();
    REQUIRE(tried.size() == 1);
    CHECK(tried[0]["answer"] == 401);
  }

  TEST_CASE("T1: socks and https proxies are refused before anything runs, never bypassed") {
    Setup s;
    for (const std::string proxy :
         {"socks5://127.0.0.1:9", "socks5h://127.0.0.1:9", "socks4://127.0.0.1:9", "https://127.0.0.1:9"}) {
      auto r = s.push("https://localhost:9/x.git", {"HTTPS_PROXY=" + proxy});
      CHECK(r.exit_code == cli::kExitUsage);
      CHECK_MESSAGE(r.err.find("not supported") != std::string::npos, r.err);
      CHECK(r.err.find("HTTPS_PROXY") != std::string::npos);
    }
  }

  TEST_CASE(
      "T1 A2: through the proxy each leg's token is bound to the origin URL, and the server's verifier accepts it") {
    Setup s;
    const std::string key = s.dir.path() + "/node.pem";
    auto kg = test::run({COURIER_BINARY, "keygen", "--out", key}, {}, test::Stdin::bytes, s.env({}));
    REQUIRE_MESSAGE(kg.exit_code == 0, kg.err);
    test::FixtureOptions fo;
    fo.verify_key = key;
    fo.replay_dir = s.dir.path() + "/replay";
    test::FixtureServer server(fo);
    server.create_bare_repo("signed");
    ConnectProxy proxy(s.dir, {"--map", "localhost"});
    // The verifier checks each token's htu against https://<Host header>/<target>:
    // it accepts only tokens bound to the origin URL as the origin saw it.
    const std::string remote = "https://localhost:" + std::to_string(server.port()) + "/signed.git";
    auto r = s.push(remote, {"HTTPS_PROXY=" + proxy.url()},
                    {"--ca-file", server.ca_file(), "--auth", "key:" + key, "--json"});
    CHECK_MESSAGE(r.exit_code == cli::kExitOk, r.err);
    CHECK(json::parse(r.out)["outcome"] == "delivered");
    CHECK(proxy.records().size() == 2);
    auto journal = server.journal();
    REQUIRE(journal.size() == 2);
    for (const auto& e : journal) {
      CHECK(e.status == 200);
      CHECK(e.header("Authorization").value_or("").rfind("Bearer ", 0) == 0);
    }
  }

  TEST_CASE("T1: the library refuses a socks or https proxy before dispatch, never showing its password") {
    test::TempDir dir;
    ExecutorOptions eo;
    eo.lane_dir = dir.path() + "/lanes";
    eo.child_program = COURIER_BINARY;
    eo.on_log = [](std::string_view) {};
    eo.on_child_stderr = [](std::string_view) {};
    Executor executor(eo);
    for (const std::string proxy : {"socks5h://u:hunter2@127.0.0.1:9", "https://u:hunter2@127.0.0.1:9"}) {
      DeliveryRequest req;
      req.repo = dir.path();
      req.remote = "https://localhost:9/x.git";
      req.ref = "refs/heads/main";
      req.oid = std::string(40, 'a');
      req.proxy = proxy;
      Outcome o = executor.submit(req).wait();
      CHECK(o.kind == OutcomeKind::failed);
      CHECK_MESSAGE(o.reason.find("not supported") != std::string::npos, o.reason);
      CHECK(o.reason.find("hunter2") == std::string::npos);
    }
    CHECK(executor.spawned() == 0);
  }

  TEST_CASE(
      "T1 A1: a library delivery through a proxy keeps its credentials in the parent and no proxy variable reaches the "
      "child") {
    test::PushSetup p(2);
    p.server.create_bare_repo("lib");
    ConnectProxy proxy(p.dir, {"--map", "localhost", "--basic", "host:pw"});
    // The host's own proxy variables must not reach the child (A1): it is
    // told the proxy's address, as a job field, and nothing else.
    ::setenv("HTTPS_PROXY", proxy.url_with("host:pw").c_str(), 1);
    ::setenv("no_proxy", "*", 1);
    DeliveryRequest req = p.request("lib", p.tip);
    req.remote = "https://localhost:" + std::to_string(p.server.port()) + "/lib.git";
    req.proxy = proxy.url_with("host:pw");
    Outcome o;
    {
      Executor executor(p.executor_options());
      o = executor.submit(req).wait();
    }
    ::unsetenv("HTTPS_PROXY");
    ::unsetenv("no_proxy");
    CHECK_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(p.remote_ref("lib") == p.tip);
    REQUIRE_FALSE(o.child_env_keys.empty());
    for (const auto& k : o.child_env_keys) {
      std::string lower = k;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      CHECK_MESSAGE(lower.find("proxy") == std::string::npos, ("a proxy variable reached the child: " + k));
    }
    const auto tunnels = proxy.records();
    REQUIRE(tunnels.size() == 2);
    for (const auto& t : tunnels) CHECK(t["proxy_authorization"] == "Basic aG9zdDpwdw==");  // base64("host:pw")
  }

  TEST_CASE(
      "T1 T2 D1: through the proxy a redirect still ends the leg with no second request, and a held POST ends at the "
      "deadline") {
    test::PushSetup p(2);
    ConnectProxy proxy(p.dir, {"--map", "localhost"});
    auto through_proxy = [&](const std::string& repo, std::int64_t budget_ms) {
      DeliveryRequest req = p.request(repo, p.tip, budget_ms);
      req.remote = "https://localhost:" + std::to_string(p.server.port()) + "/" + repo + ".git";
      req.proxy = proxy.url();
      return req;
    };
    p.server.create_bare_repo("moved");
    p.server.respond(test::RequestMatch::next("GET", "info/refs"), 302, p.server.url("elsewhere") + "/info/refs");
    {
      Executor ex(p.executor_options());
      Outcome o = ex.submit(through_proxy("moved", 30'000)).wait();
      CHECK_MESSAGE(o.kind == OutcomeKind::transport_failed, o.reason);
      CHECK(o.reason.find("302") != std::string::npos);
    }
    CHECK(p.server.count().total == 1);
    CHECK(proxy.records().size() == 1);
    p.server.create_bare_repo("held");
    p.server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    Outcome o;
    {
      Executor ex(p.executor_options());
      auto h = ex.submit(through_proxy("held", 3'000));
      REQUIRE(p.server.wait_for_held(20'000).has_value());
      o = h.wait();
    }
    CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
    CHECK(o.seat() == SeatDisposition::release);
    CHECK(proxy.records().size() == 3);  // the GET's tunnel and the POST's own
    CHECK(p.remote_ref("held").empty());
    test::report("T1 held POST through the proxy", "deadline overrun", sys::ns_to_ms(*o.deadline_overrun()), "ms");
    CHECK(*o.deadline_overrun() < 100 * sys::kNsPerMs);
  }

  TEST_CASE("T1: through the proxy the origin's certificate is still verified against the origin's name") {
    test::NginxServer nginx;
    SKIP_WITHOUT_NGINX(nginx);
    nginx.create_bare_repo("name");
    Setup s;
    // The proxy takes a name the server's certificate does not carry to the
    // server: only the name check can refuse it.
    ConnectProxy proxy(s.dir, {"--map", "not-in-the-certificate.test"});
    const std::string remote = by_name(nginx, "not-in-the-certificate.test", "name");
    auto r = s.push(remote, {"HTTPS_PROXY=" + proxy.url()}, {"--ca-file", nginx.ca_file(), "--json"});
    CHECK_MESSAGE(r.exit_code == cli::kExitFailed, r.err);
    CHECK(json::parse(r.out)["outcome"] == "transport_failed");
    CHECK(ref_of(nginx.repo_path("name")).empty());
    const auto tunnels = proxy.records();
    REQUIRE(tunnels.size() == 1);  // the tunnel was opened: TLS refused the name inside it
    CHECK(tunnels[0]["answer"] == 200);
  }
}

}  // namespace integration_cli_proxy
