// http-config.cpp — git's http.<url>.* matching held against
// `git config --get-urlmatch` over a table of patterns and URLs, and the
// trust and proxy precedence (cli/http_settings.hpp) over a table of
// configurations and environments, with NO_PROXY read as libcurl reads it.
#include <doctest/doctest.h>

#include <map>

#include "cli/http_settings.hpp"
#include "cli/url_match.hpp"
#include "fixture_server.hpp"
#include "support.hpp"
#include "wire/proxy.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_http_config {

using namespace courier;

namespace {

using courier::cli::EnvLookup;

// The entries of a configuration file as git lists them (`--list -z`: name,
// newline, value, NUL), in git's order.
repo::GitConfig listed(const std::string& file) {
  auto r = test::git({"config", "-f", file, "--list", "-z"});
  REQUIRE(r.ok());
  std::vector<repo::ConfigEntry> entries;
  std::size_t at = 0;
  while (at < r.out.size()) {
    const std::size_t end = r.out.find('\0', at);
    const std::string item = r.out.substr(at, end - at);
    const std::size_t nl = item.find('\n');
    entries.push_back({item.substr(0, nl), nl == std::string::npos ? "" : item.substr(nl + 1)});
    at = end + 1;
  }
  return repo::GitConfig(entries);
}

// Writes `entries` (key, value) to a new configuration file with git itself.
std::string write_config(const test::TempDir& dir, const std::vector<std::pair<std::string, std::string>>& entries) {
  const std::string file = dir.path() + "/config";
  for (const auto& [k, v] : entries) test::git_ok({"config", "-f", file, "--add", k, v});
  return file;
}

repo::GitConfig config_of(std::vector<repo::ConfigEntry> entries) { return repo::GitConfig(std::move(entries)); }

EnvLookup env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_SUITE("http-config") {
  TEST_CASE("T1: http.<url>.* matches as git config --get-urlmatch does, over a table of patterns and URLs") {
    test::TempDir dir;
    const std::string file = write_config(dir, {
                                                   {"http.proxy", "plain"},
                                                   {"http.https://example.com.proxy", "host"},
                                                   {"http.https://example.com/repo.proxy", "path"},
                                                   {"http.https://example.com/repo/sub/.proxy", "deeper"},
                                                   {"http.https://*.example.com.proxy", "wildcard"},
                                                   {"http.https://a.example.com.proxy", "exact-subdomain"},
                                                   {"http.https://user@example.com.proxy", "user"},
                                                   {"http.https://example.com:8443.proxy", "port"},
                                                   {"http.https://EXAMPLE.com:443/Other.proxy", "case-and-port"},
                                                   {"http.http://example.com.proxy", "http-scheme"},
                                                   {"http.https://*.*.example.org.proxy", "two-wildcards"},
                                                   {"http.https://example.net/a/./b/../c.proxy", "dots"},
                                                   {"http.https://example.net/%7Euser.proxy", "escaped"},
                                                   {"http.https://example.com/repo.proxy", "path-again"},
                                                   {"http.https://example.com/repo.sslCAInfo", "/ca-path"},
                                                   {"http.sslCAInfo", "/ca-plain"},
                                                   {"http.https://user@example.com/repo.sslCAInfo", "/ca-user"},
                                               });
    const repo::GitConfig config = listed(file);
    const std::vector<std::string> urls = {
        "https://example.com/",
        "https://example.com/repo",
        "https://example.com/repo.git",
        "https://example.com/repo/x",
        "https://example.com/repository",
        "https://example.com/repo/sub/y",
        "https://example.com/repo/sub",
        "https://a.example.com/x",
        "https://b.example.com/x",
        "https://b.c.example.com/x",
        "https://user@example.com/x",
        "https://other@example.com/repo",
        "https://user@example.com/repo/z",
        "https://example.com:8443/x",
        "https://example.com:443/Other/x",
        "https://example.com/other/x",
        "http://example.com/x",
        "https://x.y.example.org/z",
        "https://y.example.org/z",
        "https://example.net/a/c/d",
        "https://example.net/a/b",
        "https://example.net/~user/r",
        "https://unrelated.test/",
    };
    int compared = 0;
    for (const std::string key : {"proxy", "sslcainfo"}) {
      for (const auto& url : urls) {
        auto git = test::git({"config", "-f", file, "--get-urlmatch", "http." + key, url});
        const std::optional<std::string> expected =
            git.ok() ? std::optional<std::string>(git.out.substr(0, git.out.find('\n'))) : std::nullopt;
        auto ours = cli::get_urlmatch(config, "http", key, url);
        REQUIRE(ours.has_value());
        CHECK_MESSAGE(*ours == expected, (std::string("http." + key + " for " + url + ": git says ") +
                                          expected.value_or("(none)") + ", we say " + ours->value_or("(none)")));
        ++compared;
      }
    }
    test::report("T1 urlmatch table", "cases compared with git config --get-urlmatch", compared, "cases");
  }

  TEST_CASE("T1: among equally specific http.<url>.* entries the last one wins, as in git") {
    test::TempDir dir;
    const std::string file = write_config(dir, {
                                                   {"http.https://example.com/r.proxy", "first"},
                                                   {"http.proxy", "plain-later"},
                                                   {"http.https://example.com/r/.proxy", "second"},
                                               });
    auto git = test::git({"config", "-f", file, "--get-urlmatch", "http.proxy", "https://example.com/r/x"});
    REQUIRE(git.ok());
    auto ours = cli::get_urlmatch(listed(file), "http", "proxy", "https://example.com/r/x");
    REQUIRE(ours.has_value());
    CHECK(git.out == "second\n");
    CHECK(ours->value_or("") == "second");
  }

  TEST_CASE("T1: trust precedence is --ca-file, then GIT_SSL_CAINFO, then http.<url>.sslCAInfo, then http.sslCAInfo") {
    const repo::GitConfig config({{"http.sslcainfo", "/plain.pem"},
                                  {"http.https://h.test/r.sslcainfo", "/url.pem"},
                                  {"http.https://other.test.sslcainfo", "/other.pem"}});
    const std::string url = "https://h.test/r.git";
    struct Row {
      std::optional<std::string> flag;
      std::map<std::string, std::string> env;
      std::string url;
      std::optional<std::string> ca;
      std::string source;
    };
    const std::vector<Row> rows = {
        {"/flag.pem", {{"GIT_SSL_CAINFO", "/env.pem"}}, url, "/flag.pem", "--ca-file"},
        {std::nullopt, {{"GIT_SSL_CAINFO", "/env.pem"}}, url, "/env.pem", "GIT_SSL_CAINFO"},
        {std::nullopt, {}, "https://h.test/r", "/url.pem", "http.https://h.test/r.sslcainfo"},
        {std::nullopt, {}, "https://h.test/s", "/plain.pem", "http.sslcainfo"},
        {std::nullopt, {{"GIT_SSL_CAINFO", ""}}, "https://h.test/s", "/plain.pem", "http.sslcainfo"},
    };
    for (const auto& row : rows) {
      auto s = cli::resolve_http_settings(config, row.url, std::nullopt, row.flag, env_of(row.env));
      REQUIRE(s.has_value());
      CHECK(s->ca_file == row.ca);
      CHECK(s->ca_source == row.source);
    }
    auto none = cli::resolve_http_settings(config_of({}), url, std::nullopt, std::nullopt, env_of({}));
    REQUIRE(none.has_value());
    CHECK_FALSE(none->ca_file.has_value());  // the system store
  }

  TEST_CASE(
      "T1: proxy precedence follows git: remote.<name>.proxy, http.<url>.proxy, http.proxy, then the environment") {
    const std::map<std::string, std::string> env = {{"HTTPS_PROXY", "http://upper:1"},
                                                    {"https_proxy", "http://lower:2"},
                                                    {"http_proxy", "http://plain:3"},
                                                    {"ALL_PROXY", "http://all:4"}};
    struct Row {
      std::vector<repo::ConfigEntry> config;
      std::optional<std::string> remote_name;
      std::map<std::string, std::string> env;
      std::string url;
      std::optional<std::string> proxy;
    };
    const std::vector<Row> rows = {
        // The environment: https_proxy (lower case) over HTTPS_PROXY for https...
        {{}, std::nullopt, env, "https://h.test/r", "http://lower:2"},
        {{}, std::nullopt, {{"HTTPS_PROXY", "http://upper:1"}}, "https://h.test/r", "http://upper:1"},
        // ...http_proxy only for http, ALL_PROXY when nothing else is set.
        {{}, std::nullopt, env, "http://127.0.0.1/r", "http://plain:3"},
        {{}, std::nullopt, {{"ALL_PROXY", "http://all:4"}}, "https://h.test/r", "http://all:4"},
        {{}, std::nullopt, {{"HTTP_PROXY", "http://upper:5"}}, "http://127.0.0.1/r", std::nullopt},
        // http.proxy overrides the environment; an empty one disables proxying.
        {{{"http.proxy", "http://conf:6"}}, std::nullopt, env, "https://h.test/r", "http://conf:6"},
        {{{"http.proxy", ""}}, std::nullopt, env, "https://h.test/r", std::nullopt},
        // http.<url>.proxy over http.proxy for its URLs only.
        {{{"http.https://h.test.proxy", "http://url:7"}, {"http.proxy", "http://conf:6"}},
         std::nullopt,
         {},
         "https://h.test/r",
         "http://url:7"},
        {{{"http.https://h.test.proxy", "http://url:7"}, {"http.proxy", "http://conf:6"}},
         std::nullopt,
         {},
         "https://g.test/r",
         "http://conf:6"},
        // remote.<name>.proxy over all of them; empty disables.
        {{{"http.proxy", "http://conf:6"}, {"remote.origin.proxy", "http://remote:8"}},
         "origin",
         env,
         "https://h.test/r",
         "http://remote:8"},
        {{{"http.proxy", "http://conf:6"}, {"remote.origin.proxy", ""}},
         "origin",
         env,
         "https://h.test/r",
         std::nullopt},
        {{{"remote.origin.proxy", "http://remote:8"}}, std::nullopt, {}, "https://h.test/r", std::nullopt},
        // NO_PROXY exempts the host from a proxy of any source; no_proxy wins.
        {{{"http.proxy", "http://conf:6"}}, std::nullopt, {{"NO_PROXY", "h.test"}}, "https://h.test/r", std::nullopt},
        {{},
         std::nullopt,
         {{"HTTPS_PROXY", "http://upper:1"}, {"NO_PROXY", ".test"}},
         "https://h.test/r",
         std::nullopt},
        {{},
         std::nullopt,
         {{"HTTPS_PROXY", "http://upper:1"}, {"NO_PROXY", "h.test"}, {"no_proxy", "other.test"}},
         "https://h.test/r",
         "http://upper:1"},
    };
    for (const auto& row : rows) {
      auto s =
          cli::resolve_http_settings(config_of(row.config), row.url, row.remote_name, std::nullopt, env_of(row.env));
      REQUIRE_MESSAGE(s.has_value(), s.error().message);
      CHECK_MESSAGE(s->proxy == row.proxy, (std::string(row.url) + " gave " + s->proxy.value_or("(none)")));
    }
  }

  TEST_CASE("T1: socks and https proxies, and digest, negotiate and ntlm proxy authentication, are refused by name") {
    for (const std::string proxy : {"socks5://p:1080", "socks5h://p:1080", "socks4://p:1080", "https://p:443"}) {
      auto s = cli::resolve_http_settings(config_of({{"http.proxy", proxy}}), "https://h.test/r", std::nullopt,
                                          std::nullopt, env_of({}));
      REQUIRE_FALSE(s.has_value());
      CHECK(s.error().message.find("not supported") != std::string::npos);
      CHECK(s.error().message.find("http.proxy") != std::string::npos);
    }
    for (const std::string method : {"digest", "negotiate", "NTLM"}) {
      auto s =
          cli::resolve_http_settings(config_of({{"http.proxy", "http://p:3128"}, {"http.proxyauthmethod", method}}),
                                     "https://h.test/r", std::nullopt, std::nullopt, env_of({}));
      REQUIRE_FALSE(s.has_value());
      CHECK(s.error().message.find("only Basic") != std::string::npos);
    }
    auto basic =
        cli::resolve_http_settings(config_of({{"http.proxy", "http://p:3128"}, {"http.proxyauthmethod", "basic"}}),
                                   "https://h.test/r", std::nullopt, std::nullopt, env_of({}));
    CHECK(basic.has_value());
    // The message never shows the proxy's password.
    auto secret = cli::resolve_http_settings(config_of({{"http.proxy", "socks5://u:hunter2@p:1080"}}),
                                             "https://h.test/r", std::nullopt, std::nullopt, env_of({}));
    REQUIRE_FALSE(secret.has_value());
    CHECK(secret.error().message.find("hunter2") == std::string::npos);
  }

  TEST_CASE("T1: a proxy URL is read as git and libcurl read it, and split into address and credentials") {
    struct Row {
      std::string text;
      std::string url;
      std::optional<std::string> authorization;
    };
    const std::vector<Row> rows = {
        {"proxy.test", "http://proxy.test:1080", std::nullopt},  // no scheme: http://, no port: 1080
        {"proxy.test:3128", "http://proxy.test:3128", std::nullopt},
        {"HTTP://Proxy.Test:3128/", "http://proxy.test:3128", std::nullopt},
        {"http://[::1]:3128", "http://[::1]:3128", std::nullopt},
        {"http://u%40x:p%3Aw@proxy.test:3128", "http://proxy.test:3128",
         "Proxy-Authorization: Basic dUB4OnA6dw=="},  // base64("u@x:p:w")
    };
    for (const auto& r : rows) {
      auto p = wire::parse_proxy(r.text);
      REQUIRE_MESSAGE(p.has_value(), (r.text + ": " + p.error().message));
      CHECK(p->url == r.url);
      CHECK(p->authorization == r.authorization);
    }
    for (const std::string bad :
         {"http://u@proxy.test:3128", "http://proxy.test:3128/path", "ftp://proxy.test", "http://proxy.test:99999"}) {
      auto p = wire::parse_proxy(bad);
      CHECK_MESSAGE(!p.has_value(), bad);
    }
  }

  TEST_CASE("T1: NO_PROXY is read as libcurl reads it") {
    struct Row {
      std::string host;
      std::string list;
      bool exempt;
    };
    const std::vector<Row> rows = {
        {"h.test", "*", true},
        {"h.test", "h.test", true},
        {"a.h.test", "h.test", true},
        {"a.h.test", ".h.test", true},
        {"noth.test", "h.test", false},
        {"h.test", "other.test, h.test", true},
        {"h.test", "other.test h.test", false},  // libcurl stops at a blank separator
        {"h.test", "H.TEST.", true},
        {"127.0.0.1", "127.0.0.1", true},
        {"127.0.0.1", "127.0.0.0/8", true},
        {"10.1.2.3", "127.0.0.0/8", false},
        {"127.0.0.1", "localhost", false},
        {"[::1]", "::1", true},
        {"h.test", "", false},
    };
    for (const auto& r : rows) {
      CHECK_MESSAGE(cli::no_proxy_matches(r.host, r.list) == r.exempt, (r.host + " in '" + r.list + "'"));
    }
  }
}

}  // namespace integration_http_config
