// cli-messages.cpp — what the shipped CLI tells a person, terminal or
// not: the remote's own words (hook output as `remote:` lines, in --json and
// in a rejection's reason), hints that say what to do (TLS trust, 401/403,
// a repository that is not there, a transport that is not spoken), the JSON
// object of a usage error, and -v / -q. Against nginx + git http-backend
// over TLS, and the fixture server where the server must answer a certain
// way.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "fixture_server.hpp"
#include "nginx_server.hpp"
#include "protocol/messages.hpp"
#include "support.hpp"
#include "transport/advertisement.hpp"
#include "transport/request.hpp"
#include "transport/sideband_text.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli_messages {

using namespace courier;
using nlohmann::json;

namespace {

// A source repository and the CLI's arguments to push from it.
struct Cli {
  test::TempDir dir;
  std::string source;
  std::string lanes;

  Cli() {
    source = dir.path() + "/source";
    test::make_source_repo(source, 2);
    lanes = dir.path() + "/lanes";
  }

  // push --repo ... --remote REMOTE --ref REF --rev HEAD [--ca-file CA] --no-journal EXTRA...
  test::RunResult push(const std::string& remote, const std::string& ca, const std::string& ref,
                       std::vector<std::string> extra = {}) const {
    std::vector<std::string> a = {COURIER_BINARY, "push", "--repo",     source, "--remote",    remote, "--ref", ref,
                                  "--rev",        "HEAD", "--lane-dir", lanes,  "--no-journal"};
    if (!ca.empty()) {
      a.push_back("--ca-file");
      a.push_back(ca);
    }
    a.insert(a.end(), extra.begin(), extra.end());
    return test::run(a, {}, test::Stdin::bytes, test::cli_env());
  }
};

json parse_json(const std::string& out) {
  json j = json::parse(out, nullptr, false);
  REQUIRE_MESSAGE(!j.is_discarded(), "stdout is not one JSON object: ", out);
  return j;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// An executable hook in a bare repository.
void install_hook(const std::string& git_dir, const std::string& name, const std::string& script) {
  const std::string path = git_dir + "/hooks/" + name;
  test::write_file(path, script);
  REQUIRE(::chmod(path.c_str(), 0755) == 0);
}

// The pre-receive hook of these tests: two lines of its own words (one with
// a tab, shown as git shows it, and a BEL, a control byte that must stay
// escaped), then a refusal.
const std::string kLockedHook =
    "#!/bin/sh\n"
    "echo 'refs/heads/locked is locked' >&2\n"
    "printf 'ask\\tthe owner\\a\\n' >&2\n"
    "exit 1\n";

}  // namespace

TEST_SUITE("cli") {
  TEST_CASE("X-MSG1: side-band text is cut into lines as git cuts it, wherever the packets split it") {
    const std::string text = "remote one\nResolving:  50%\rResolving: 100%\rResolving: 100%, done.\nlast words";
    for (std::size_t chunk : {text.size(), std::size_t{1}, std::size_t{5}}) {
      CAPTURE(chunk);
      transport::SidebandText split(protocol::kMaxRemoteLine);
      std::vector<transport::SidebandLine> lines;
      for (std::size_t at = 0; at < text.size(); at += chunk) {
        for (auto& l : split.feed(std::string_view(text).substr(at, chunk))) lines.push_back(l);
      }
      for (auto& l : split.finish()) lines.push_back(l);
      const std::vector<transport::SidebandLine> want = {{"remote one", false},
                                                         {"Resolving:  50%", true},
                                                         {"Resolving: 100%", true},
                                                         {"Resolving: 100%, done.", false},
                                                         {"last words", false}};
      CHECK(lines == want);
    }
    transport::SidebandText capped(4);
    CHECK(capped.feed("abcdefgh\nxy\n") == std::vector<transport::SidebandLine>{{"abcd", false}, {"xy", false}});
  }

  TEST_CASE("X-MSG1: the job's remote_progress and the result's remote_messages travel in frames, and are capped") {
    protocol::Job job;
    job.parent_pid = 1;
    job.repo = "/r";
    job.remote = "https://h/r";
    job.updates = {RefUpdate{"refs/heads/x", std::string(40, 'a')}};
    job.deadline_mono_ns = 1;
    job.scratch_dir = "/s";
    for (bool ask : {false, true}) {
      job.remote_progress = ask;
      auto body = protocol::encode(protocol::ParentMessage{job});
      REQUIRE(body);
      CHECK((body->find("remote_progress") != std::string::npos) == ask);  // absent when false
      auto back = protocol::decode_parent(*body);
      REQUIRE(back);
      CHECK(std::get<protocol::Job>(*back) == job);
    }
    protocol::ResultMsg res;
    res.status = wire::DeliveryStatus::rejected;
    res.refs = {protocol::RefResult{"refs/heads/locked", RefStatus::ng, "pre-receive hook declined", std::nullopt}};
    res.reason = "pre-receive hook declined (remote: refs/heads/locked is locked)";
    res.remote_messages = {"refs/heads/locked is locked", "ask\\x09the owner"};
    res.remote_messages_dropped = 2;
    auto body = protocol::encode(protocol::ChildMessage{res});
    REQUIRE(body);
    auto back = protocol::decode_child(*body);
    REQUIRE(back);
    CHECK(std::get<protocol::ResultMsg>(*back) == res);
    res.remote_messages.assign(protocol::kMaxRemoteMessages + 1, "x");
    auto over = protocol::decode_child(*protocol::encode(protocol::ChildMessage{res}));
    REQUIRE(!over);
    CHECK(over.error().code == Errc::invalid_value);
  }

  TEST_CASE("X-MSG1: `quiet` is asked for unless the remote's progress is wanted") {
    transport::Advertisement adv;
    adv.capabilities = transport::parse_capabilities("report-status side-band-64k quiet");
    auto quiet = transport::build_push_request(adv, {{"refs/heads/main", std::string(40, 'b')}});
    REQUIRE(quiet);
    CHECK(std::count(quiet->capabilities.begin(), quiet->capabilities.end(), "quiet") == 1);
    auto talk = transport::build_push_request(adv, {{"refs/heads/main", std::string(40, 'b')}}, {true});
    REQUIRE(talk);
    CHECK(std::count(talk->capabilities.begin(), talk->capabilities.end(), "quiet") == 0);
    CHECK(talk->side_band);
  }

  TEST_CASE(
      "X-MSG1: a hook's rejection reaches non-terminal stderr as remote: lines, --json and the reason, as git shows "
      "it") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Cli c;
    const std::string bare = nginx.create_bare_repo("hooked");
    install_hook(bare, "pre-receive", kLockedHook);
    const std::string remote = nginx.url("hooked");

    auto r = c.push(remote, nginx.ca_file(), "refs/heads/locked", {"--json"});
    CHECK_MESSAGE(r.exit_code == cli::kExitRejected, r.err);
    // stderr is a pipe here, not a terminal: the lines come all the same,
    // one per line, printable, never with an escaped line end.
    CHECK_MESSAGE(has(r.err, "remote: refs/heads/locked is locked\n"), r.err);
    CHECK_MESSAGE(has(r.err, "remote: ask\tthe owner\\x07\n"), r.err);
    CHECK_MESSAGE(!has(r.err, "\\x0a"), r.err);
    CHECK_MESSAGE(!has(r.err, "\\x0d"), r.err);
    json j = parse_json(r.out);
    CHECK(j["outcome"] == "rejected");
    REQUIRE(j["remote_messages"].is_array());
    CHECK(j["remote_messages"] == json::array({"refs/heads/locked is locked", "ask\tthe owner\\x07"}));
    CHECK(j["remote_messages_dropped"] == 0);
    const std::string reason = j["reason"].get<std::string>();
    CHECK_MESSAGE(has(reason, "pre-receive hook declined"), reason);
    CHECK_MESSAGE(has(reason, "refs/heads/locked is locked"), reason);

    // git itself, against the same server: the same remote: line and the
    // same words in its reason.
    const std::string work = c.dir.path() + "/git-push";
    test::git_ok({"clone", "-q", c.source, work});
    auto g =
        test::git({"-C", work, "push", remote, "HEAD:refs/heads/locked"}, {}, {"GIT_SSL_CAINFO=" + nginx.ca_file()});
    CHECK(!g.ok());
    CHECK_MESSAGE(has(g.err, "remote: refs/heads/locked is locked"), g.err);
    CHECK_MESSAGE(has(g.err, "(pre-receive hook declined)"), g.err);
    MESSAGE("git push said:\n" << g.err << "git-courier said:\n" << r.err);

    // -q: the remote: lines go, the error and its reason (with the hook's
    // words) stay.
    auto q = c.push(remote, nginx.ca_file(), "refs/heads/locked", {"-q"});
    CHECK(q.exit_code == cli::kExitRejected);
    CHECK_MESSAGE(!has(q.err, "remote: refs/heads/locked is locked\n"), q.err);
    CHECK_MESSAGE(has(q.err, "rejected by the remote"), q.err);
    CHECK_MESSAGE(has(q.err, "refs/heads/locked is locked"), q.err);
  }

  TEST_CASE("X-MSG1: -q prints nothing for a delivery whose hook talks; without it the hook's lines show") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Cli c;
    const std::string bare = nginx.create_bare_repo("talkative");
    install_hook(bare, "post-receive", "#!/bin/sh\necho 'thanks for the push' >&2\n");
    const std::string remote = nginx.url("talkative");
    auto quiet = c.push(remote, nginx.ca_file(), "refs/heads/quiet", {"-q"});
    CHECK_MESSAGE(quiet.exit_code == cli::kExitOk, quiet.err);
    CHECK_MESSAGE(quiet.err.empty(), quiet.err);
    CHECK(quiet.out.empty());
    auto talk = c.push(remote, nginx.ca_file(), "refs/heads/talk");
    CHECK_MESSAGE(talk.exit_code == cli::kExitOk, talk.err);
    CHECK_MESSAGE(has(talk.err, "remote: thanks for the push\n"), talk.err);
  }

  TEST_CASE("X-MSG1: -v prints the supervisor's log lines with stderr not a terminal; without -v they are not shown") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Cli c;
    nginx.create_bare_repo("verbose");
    const std::string remote = nginx.url("verbose");
    auto v = c.push(remote, nginx.ca_file(), "refs/heads/v", {"-v"});
    CHECK_MESSAGE(v.exit_code == cli::kExitOk, v.err);
    // The CLI's child is its early child, spawned warm before the checks.
    CHECK_MESSAGE(has(v.err, "git-courier: spawned warm child "), v.err);
    auto plain = c.push(remote, nginx.ca_file(), "refs/heads/plain");
    CHECK_MESSAGE(plain.exit_code == cli::kExitOk, plain.err);
    CHECK_MESSAGE(!has(plain.err, "spawned"), plain.err);
    auto both = c.push(remote, nginx.ca_file(), "refs/heads/both", {"-v", "-q"});
    CHECK_MESSAGE(both.exit_code == cli::kExitOk, both.err);
    CHECK_MESSAGE(both.err.empty(), both.err);
  }

  TEST_CASE("X-MSG2: a repository that is not there is \"repository not found at <remote>\", never the server's HTML") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Cli c;
    const std::string remote = nginx.url("no-such-repo");
    auto r = c.push(remote, nginx.ca_file(), "refs/heads/main", {"--json"});
    CHECK(r.exit_code == cli::kExitFailed);
    CHECK_MESSAGE(has(r.err, "repository not found at " + remote), r.err);
    CHECK_MESSAGE(!has(r.err, "<"), r.err);
    CHECK_MESSAGE(!has(r.out, "<"), r.out);

    // A server whose 404 is a whole HTML page: none of it is printed.
    test::FixtureServer server;
    const std::string page = "<html><head><title>404 Not Found</title></head><body>nginx</body></html>";
    server.respond(test::RequestMatch::next("GET"), 404, {}, page, {{"Content-Type", "text/html"}});
    auto f = c.push(server.url("gone"), server.ca_file(), "refs/heads/main");
    CHECK(f.exit_code == cli::kExitFailed);
    CHECK_MESSAGE(has(f.err, "repository not found at " + server.url("gone")), f.err);
    CHECK_MESSAGE(!has(f.err, "<html"), f.err);
    CHECK_MESSAGE(!has(f.err, "Not Found</title>"), f.err);
    // Another status with an HTML page: the status, without the page.
    server.respond(test::RequestMatch::next("GET"), 500, {}, page, {{"Content-Type", "text/html"}});
    auto e = c.push(server.url("gone"), server.ca_file(), "refs/heads/main");
    CHECK(e.exit_code == cli::kExitFailed);
    CHECK_MESSAGE(has(e.err, "answered 500"), e.err);
    CHECK_MESSAGE(!has(e.err, "<html"), e.err);
  }

  TEST_CASE("X-MSG2: an untrusted certificate says to pass --ca-file or set http.sslCAInfo, not libcurl's SSH words") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Cli c;
    nginx.create_bare_repo("tls");
    auto r = c.push(nginx.url("tls"), "", "refs/heads/main");
    CHECK(r.exit_code == cli::kExitFailed);
    CHECK_MESSAGE(has(r.err, "pass --ca-file"), r.err);
    CHECK_MESSAGE(has(r.err, "http.sslCAInfo"), r.err);
    CHECK_MESSAGE(!has(r.err, "SSH remote key"), r.err);
  }

  TEST_CASE("X-MSG2: 401 names the --auth used and what to try") {
    test::FixtureOptions fo;
    fo.basic_auth = "alice:s3cret";
    test::FixtureServer server(fo);
    server.create_bare_repo("locked");
    Cli c;
    auto none = c.push(server.url("locked"), server.ca_file(), "refs/heads/main", {"--json"});
    CHECK(none.exit_code == cli::kExitFailed);
    CHECK_MESSAGE(has(none.err, "hint: the remote wants credentials and --auth none sent none"), none.err);
    CHECK_MESSAGE(has(none.err, "--auth credential"), none.err);
    CHECK(parse_json(none.out)["outcome"] == "auth_failed");
    CHECK_MESSAGE(has(parse_json(none.out)["hint"].get<std::string>(), "--auth none"), none.out);

    const std::string token = c.dir.path() + "/token";
    test::write_file(token, "not-the-right-token\n");
    REQUIRE(::chmod(token.c_str(), 0600) == 0);
    auto bearer = c.push(server.url("locked"), server.ca_file(), "refs/heads/main", {"--auth", "bearer:" + token});
    CHECK(bearer.exit_code == cli::kExitFailed);
    CHECK_MESSAGE(has(bearer.err, "hint: the remote refused the token in " + token + " (--auth bearer:" + token + ")"),
                  bearer.err);
  }

  TEST_CASE("X-MSG2: git:// and file:// remotes are \"not supported\", not \"malformed\"") {
    Cli c;
    for (const std::string remote : {"git://example.com/r.git", "file:///srv/r.git"}) {
      CAPTURE(remote);
      auto r = c.push(remote, "", "refs/heads/main");
      CHECK(r.exit_code == cli::kExitUsage);
      CHECK_MESSAGE(has(r.err, "only https:// (and http:// to loopback) and ssh are supported"), r.err);
      CHECK_MESSAGE(!has(r.err, "malformed"), r.err);
    }
  }

  TEST_CASE("X-MSG2: an ssh remote pushed without a key names --auth ssh-key:FILE, in every spelling") {
    Cli c;
    for (const std::string remote : {"ssh://git@example.com/r.git", "git@example.com:owner/r.git", "example.com:r.git",
                                     "git+ssh://git@example.com/r.git"}) {
      CAPTURE(remote);
      auto r = c.push(remote, "", "refs/heads/main");
      CHECK(r.exit_code == cli::kExitUsage);
      CHECK_MESSAGE(has(r.err, "--auth ssh-key:FILE"), r.err);
      CHECK_MESSAGE(!has(r.err, "malformed"), r.err);
    }
  }

  TEST_CASE("X-MSG2: --json answers a usage error with {\"outcome\":\"usage\",\"message\":...} and exit 2") {
    Cli c;
    struct Case {
      std::vector<std::string> argv;
      std::string says;
    };
    const std::vector<Case> cases = {
        {{COURIER_BINARY, "push", "--json", "--bogus"}, "unknown option '--bogus'"},
        {{COURIER_BINARY, "push", "--json", "--repo", c.source, "--remote", "git://h/r.git", "--ref", "refs/heads/m",
          "--rev", "HEAD", "--no-journal"},
         "only https://"},
        {{COURIER_BINARY, "log", "--json", "--limit", "0"}, "--limit"},
        {{COURIER_BINARY, "show", "--json", "bad id!"}, "delivery id"},
        {{COURIER_BINARY, "recover", "--json", "--auth", "bogus"}, "--auth"},
    };
    for (const auto& k : cases) {
      CAPTURE(k.argv[1]);
      CAPTURE(k.says);
      auto r = test::run(k.argv, {}, test::Stdin::bytes, test::cli_env());
      CHECK(r.exit_code == cli::kExitUsage);
      json j = parse_json(r.out);
      CHECK(j["outcome"] == "usage");
      CHECK_MESSAGE(has(j["message"].get<std::string>(), k.says), r.out);
      // A refused request lists its refused fields too, in the service's
      // error shape: {"field", "code", "message"}.
      if (j.contains("errors")) {
        CHECK(j.size() == 3);
        REQUIRE(j["errors"].size() == 1);
        CHECK(j["errors"][0]["field"] == "remote");
        CHECK(j["errors"][0]["code"] == "bad_remote");
        CHECK_MESSAGE(has(j["errors"][0]["message"].get<std::string>(), k.says), r.out);
      } else {
        CHECK(j.size() == 2);
      }
      CHECK_MESSAGE(has(r.err, k.says), r.err);  // and on stderr, as without --json
    }
  }
}

}  // namespace integration_cli_messages
