// auth-credential-cli.cpp — `push --auth credential` as git handles
// credentials (T2), with the shipped CLI against the fixture server: the
// helper is the one `--repo` configures, wherever the command is started;
// the advertisement GET goes first without credentials and the helper is
// asked only after a 401; a 403 keeps the stored credential (a real
// `git credential-store` file) and says the account lacks rights. And a
// TLS failure names the trust source it used (T1).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/args.hpp"
#include "fixture_server.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_auth_credential_cli {

using namespace courier;
using nlohmann::json;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string read_or_empty(const std::string& path) {
  return std::filesystem::exists(path) ? test::read_file(path) : std::string();
}

// A source repository and what a push from it needs: no system or global
// git configuration (every helper is one the test configures in a
// repository), a lane directory, and a helper script that logs each call.
struct Setup {
  test::TempDir dir;
  std::string source;
  std::string lanes;

  Setup() {
    source = dir.path() + "/source";
    test::make_source_repo(source, 2);
    lanes = dir.path() + "/lanes";
  }

  // An executable helper: each call appends "<action>" to `log`, then
  // `get` answers the user name and password.
  std::string helper(const std::string& name, const std::string& log, const std::string& user,
                     const std::string& password) const {
    const std::string path = dir.path() + "/" + name + ".sh";
    test::write_file(path, "#!/bin/sh\ncat >/dev/null\necho \"$1\" >> '" + log +
                               "'\ncase \"$1\" in\n  get) echo username=" + user + "; echo password=" + password +
                               " ;;\nesac\n");
    REQUIRE(::chmod(path.c_str(), 0755) == 0);
    return path;
  }

  void config(const std::string& repo, const std::string& key, const std::string& value) const {
    test::git_ok({"config", "--add", key, value}, repo);
  }

  // push --repo SOURCE ... run in `cwd` (env -C) with the test's git
  // environment plus `extra`.
  test::RunResult push(const std::string& remote, const std::string& cwd, std::vector<std::string> flags = {},
                       const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> a = {"/usr/bin/env", "-C", cwd};
    for (const auto& e : test::cli_env()) a.push_back(e);
    for (const auto& e : test::git_env(extra)) a.push_back(e);
    for (const std::string& s :
         {std::string(COURIER_BINARY), std::string("push"), std::string("--repo"), source, std::string("--remote"),
          remote, std::string("--ref"), std::string("refs/heads/main"), std::string("--rev"), std::string("HEAD"),
          std::string("--lane-dir"), lanes, std::string("--no-journal")}) {
      a.push_back(s);
    }
    a.insert(a.end(), flags.begin(), flags.end());
    return test::run(a, {}, test::Stdin::bytes, {"PATH=/usr/bin:/bin"});
  }
};

std::string ref_of(const std::string& git_dir) {
  auto r = test::git({"--git-dir", git_dir, "rev-parse", "--verify", "-q", "refs/heads/main"});
  return r.ok() ? r.out.substr(0, 40) : std::string();
}

// The GETs and POSTs the server saw, and how many carried credentials.
struct Seen {
  int gets = 0;
  int authenticated_gets = 0;
  int posts = 0;
};

Seen seen(test::FixtureServer& server) {
  Seen s;
  for (const auto& e : server.journal()) {
    const bool auth = e.header("Authorization").has_value();
    if (e.method == "GET") {
      ++s.gets;
      if (auth) ++s.authenticated_gets;
    }
    if (e.method == "POST") ++s.posts;
  }
  return s;
}

}  // namespace

TEST_SUITE("auth") {
  TEST_CASE("T2: a 403 to the stored credential keeps it in the credential store and says the account lacks rights") {
    // Without the credential, 401; with it, the account is known and lacks
    // rights on the repository: 403.
    test::FixtureOptions fo;
    fo.basic_auth = "alice:pw";
    fo.basic_forbidden = true;
    test::FixtureServer server(fo);
    server.create_bare_repo("r");
    Setup s;
    const std::string store = s.dir.path() + "/store";
    const std::string host = server.url("r").substr(8, server.url("r").find('/', 8) - 8);
    const std::string stored = "https://alice:pw@" + host + "\n";
    test::write_file(store, stored);
    s.config(s.source, "credential.helper", "store --file " + store);
    auto r = s.push(server.url("r"), s.dir.path(), {"--ca-file", server.ca_file(), "--auth", "credential", "--json"});
    CHECK(r.exit_code == cli::kExitFailed);
    CHECK(json::parse(r.out)["outcome"] == "auth_failed");
    CHECK_MESSAGE(read_or_empty(store) == stored, "the credential a 403 answered was erased from the store");
    CHECK_MESSAGE(has(r.err, "the account lacks rights on"), r.err);
    CHECK_MESSAGE(has(r.err, "the stored credential was kept"), r.err);
    CHECK_MESSAGE(!has(r.err, "alice:pw"), r.err);
    // One unauthenticated GET (401), then the one authenticated GET (403).
    const Seen legs = seen(server);
    CHECK(legs.gets == 2);
    CHECK(legs.authenticated_gets == 1);
    CHECK(legs.posts == 0);

    // The same store with a wrong password: 401, which git rejects, and so
    // does this product (the store's line is erased).
    test::write_file(store, "https://alice:wrong@" + host + "\n");
    auto wrong =
        s.push(server.url("r"), s.dir.path(), {"--ca-file", server.ca_file(), "--auth", "credential", "--json"});
    CHECK(json::parse(wrong.out)["outcome"] == "auth_failed");
    CHECK_MESSAGE(read_or_empty(store).empty(), "a credential the remote refused with 401 stayed in the store");
  }

  TEST_CASE("T2: --auth credential against a server that needs no credentials asks the helper nothing") {
    test::FixtureServer server;
    server.create_bare_repo("open");
    Setup s;
    const std::string log = s.dir.path() + "/helper.log";
    s.config(s.source, "credential.helper", s.helper("helper", log, "alice", "pw"));
    auto r =
        s.push(server.url("open"), s.dir.path(), {"--ca-file", server.ca_file(), "--auth", "credential", "--json"});
    CHECK_MESSAGE(r.exit_code == cli::kExitOk, r.err);
    CHECK(json::parse(r.out)["outcome"] == "delivered");
    CHECK_MESSAGE(read_or_empty(log).empty(), "the helper was asked: " << read_or_empty(log));
    CHECK(ref_of(server.repo_path("open")) == test::git_ok({"rev-parse", "HEAD"}, s.source));
    const Seen legs = seen(server);
    CHECK(legs.gets == 1);
    CHECK(legs.authenticated_gets == 0);
    CHECK(legs.posts == 1);
  }

  TEST_CASE("T2: a 401 to the POST after an unauthenticated advertisement is auth_failed, and the POST is sent once") {
    test::FixtureServer server;
    server.create_bare_repo("half");
    server.respond(test::RequestMatch::next("POST"), 401, {}, "push needs credentials\n");
    Setup s;
    const std::string log = s.dir.path() + "/helper.log";
    s.config(s.source, "credential.helper", s.helper("helper", log, "alice", "pw"));
    auto r =
        s.push(server.url("half"), s.dir.path(), {"--ca-file", server.ca_file(), "--auth", "credential", "--json"});
    CHECK(r.exit_code == cli::kExitFailed);
    const json out = json::parse(r.out);
    CHECK(out["outcome"] == "auth_failed");
    CHECK(out["remote_effect"] == "possible");
    CHECK_MESSAGE(has(r.err, "the push is never sent twice"), r.err);
    CHECK_MESSAGE(read_or_empty(log).empty(), "the helper was asked: " << read_or_empty(log));
    const Seen legs = seen(server);
    CHECK(legs.gets == 1);
    CHECK(legs.posts == 1);
    CHECK(ref_of(server.repo_path("half")).empty());
  }

  TEST_CASE("T2: the credential helper is --repo's, from outside it and from inside another repository") {
    test::FixtureOptions fo;
    fo.basic_auth = "alice:pw";
    test::FixtureServer server(fo);
    Setup s;
    const std::string ours = s.dir.path() + "/ours.log";
    const std::string theirs = s.dir.path() + "/theirs.log";
    s.config(s.source, "credential.helper", s.helper("ours", ours, "alice", "pw"));
    const std::string other = s.dir.path() + "/other";
    test::make_source_repo(other, 1);
    s.config(other, "credential.helper", s.helper("theirs", theirs, "mallory", "theirs"));
    const std::string elsewhere = s.dir.path() + "/elsewhere";
    std::filesystem::create_directories(elsewhere);
    struct Row {
      std::string name;
      std::string cwd;
      std::string repo;
    };
    for (const Row& row : {Row{"outside any repository", elsewhere, "a"}, Row{"inside another repository", other, "b"},
                           Row{"inside a subdirectory of another repository", other + "/.git", "c"}}) {
      CAPTURE(row.name);
      server.create_bare_repo(row.repo);
      test::write_file(ours, "");
      auto r = s.push(server.url(row.repo), row.cwd, {"--ca-file", server.ca_file(), "--auth", "credential", "--json"});
      CHECK_MESSAGE(r.exit_code == cli::kExitOk, r.err);
      CHECK_MESSAGE(has(read_or_empty(ours), "get"), "--repo's helper was not asked");
      CHECK_MESSAGE(has(read_or_empty(ours), "store"), "--repo's helper was not told the credential worked");
      CHECK_MESSAGE(read_or_empty(theirs).empty(), "the working directory's helper was asked");
    }
  }

  TEST_CASE("T1: a TLS failure names the trust source it used, and its hint never suggests what is already set") {
    test::FixtureServer server;
    server.create_bare_repo("t");
    const std::string remote = server.url("t");
    // A bundle of CAs that signed nothing this server presents.
    const std::string unrelated = "/etc/ssl/certs/ca-certificates.crt";
    REQUIRE(std::filesystem::exists(unrelated));
    struct Row {
      std::string name;
      std::vector<std::pair<std::string, std::string>> config;
      std::vector<std::string> env;
      std::vector<std::string> flags;
      std::string names;               // the anchor as the message says it
      std::vector<std::string> never;  // advice the hint must not give
    };
    const std::string url_key = "http." + remote.substr(0, remote.find('/', 8)) + ".sslCAInfo";
    const std::vector<Row> rows = {
        {"--ca-file",
         {},
         {},
         {"--ca-file", unrelated},
         unrelated + " (--ca-file, trusted alone)",
         {"set http", "GIT_SSL"}},
        {"GIT_SSL_CAINFO over http.sslCAInfo",
         {{"http.sslCAInfo", server.ca_file()}},
         {"GIT_SSL_CAINFO=" + unrelated},
         {},
         unrelated + " (GIT_SSL_CAINFO)",
         {"set http.sslCAInfo", "set GIT_SSL_CAINFO", "or GIT_SSL_CAINFO"}},
        {"http.<url>.sslCAInfo", {{url_key, unrelated}}, {}, {}, unrelated + " (http.https://", {"set http"}},
        {"http.sslCAInfo", {{"http.sslCAInfo", unrelated}}, {}, {}, unrelated + " (http.sslcainfo)", {"set http"}},
        {"the system store", {}, {}, {}, "the system store (", {}},
    };
    for (const auto& row : rows) {
      CAPTURE(row.name);
      Setup s;
      for (const auto& [k, v] : row.config) s.config(s.source, k, v);
      auto flags = row.flags;
      flags.push_back("-v");
      auto r = s.push(remote, s.dir.path(), flags, row.env);
      CHECK(r.exit_code == cli::kExitFailed);
      const bool named = has(lower(r.err), lower("could not be verified against the CA file " + row.names)) ||
                         has(r.err, "could not be verified against " + row.names);
      CHECK_MESSAGE(named, "the TLS failure did not name its trust source: " << r.err);
      // -v says the anchor before anything is sent.
      CHECK_MESSAGE(has(r.err, "git-courier: trust: "), r.err);
      for (const auto& advice : row.never) {
        CHECK_MESSAGE(!has(r.err, advice), "the hint suggests what is already set (" << advice << "): " << r.err);
      }
    }
  }
}

}  // namespace integration_auth_credential_cli
