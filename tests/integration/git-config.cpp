// git-config.cpp — git's configuration as git itself reads it: every
// value GitConfig gives is compared with `git config --get` run on the same
// files and environment.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>

#include "repo/git_config.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_git_config {

using namespace courier;
using courier::test::run;
using courier::test::TempDir;

namespace {

// Sets (or unsets) environment variables for one scope, restoring them after.
class EnvScope {
 public:
  explicit EnvScope(const std::map<std::string, std::optional<std::string>>& vars) {
    for (const auto& [k, v] : vars) {
      const char* old = std::getenv(k.c_str());
      saved_[k] = old ? std::optional<std::string>(old) : std::nullopt;
      if (v)
        ::setenv(k.c_str(), v->c_str(), 1);
      else
        ::unsetenv(k.c_str());
    }
  }
  ~EnvScope() {
    for (const auto& [k, v] : saved_) {
      if (v)
        ::setenv(k.c_str(), v->c_str(), 1);
      else
        ::unsetenv(k.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// `git config --get KEY` in repo with the same environment as this process's
// configuration-relevant variables.
std::optional<std::string> git_get(const std::string& repo, const std::string& key,
                                   const std::vector<std::string>& env) {
  auto r = run({"/usr/bin/git", "-C", repo, "config", "--get", key}, {}, courier::test::Stdin::bytes, env);
  if (r.exit_code != 0) return std::nullopt;
  return trim(r.out);
}

}  // namespace

TEST_SUITE("git-config") {
  TEST_CASE("the configuration read is what git config --get reads, level by level, with the last value winning") {
    TempDir dir;
    const std::string repo = dir.path() + "/repo";
    const std::string global = dir.path() + "/global.gitconfig";
    const std::vector<std::string> env{"PATH=/usr/bin:/bin", "HOME=" + dir.path(), "GIT_CONFIG_NOSYSTEM=1",
                                       "GIT_CONFIG_GLOBAL=" + global};
    REQUIRE(run({"/usr/bin/git", "init", "-q", repo}, {}, courier::test::Stdin::bytes, env).exit_code == 0);
    courier::test::write_file(global,
                              "[http]\n\tsslCAInfo = /global/ca.pem\n\tproxy = http://global-proxy:3128\n"
                              "[remote \"Origin\"]\n\turl = https://global.example/repo.git\n");
    auto set = [&](const std::string& k, const std::string& v) {
      REQUIRE(run({"/usr/bin/git", "-C", repo, "config", k, v}, {}, courier::test::Stdin::bytes, env).exit_code == 0);
    };
    set("http.proxy", "http://local-proxy:8080");
    set("remote.Origin.pushurl", "https://push.example/repo.git");
    set("http.https://host.example/.sslCAInfo", "/per-url/ca.pem");

    EnvScope scope({{"HOME", dir.path()},
                    {"GIT_CONFIG_NOSYSTEM", "1"},
                    {"GIT_CONFIG_GLOBAL", global},
                    {"GIT_CONFIG_PARAMETERS", std::nullopt},
                    {"GIT_CONFIG_COUNT", std::nullopt}});
    auto cfg = repo::GitConfig::open(repo);
    REQUIRE_MESSAGE(cfg.has_value(), (cfg ? std::string() : cfg.error().message));
    for (const std::string key : {"http.sslcainfo", "http.proxy", "remote.Origin.url", "remote.Origin.pushurl",
                                  "http.https://host.example/.sslcainfo", "remote.origin.url"}) {
      CHECK_MESSAGE(cfg->get(key) == git_get(repo, key, env), key);
    }
    CHECK(cfg->get("http.proxy") == std::optional<std::string>("http://local-proxy:8080"));
    CHECK(cfg->get("HTTP.SSLCAINFO") == std::optional<std::string>("/global/ca.pem"));
  }

  TEST_CASE("command-line parameters and GIT_CONFIG_COUNT override the files, as with git -c") {
    TempDir dir;
    const std::string repo = dir.path() + "/repo";
    const std::vector<std::string> base{"PATH=/usr/bin:/bin", "HOME=" + dir.path(), "GIT_CONFIG_NOSYSTEM=1",
                                        "GIT_CONFIG_GLOBAL=/dev/null"};
    REQUIRE(run({"/usr/bin/git", "init", "-q", repo}, {}, courier::test::Stdin::bytes, base).exit_code == 0);
    REQUIRE(run({"/usr/bin/git", "-C", repo, "config", "http.proxy", "http://file:1"}, {}, courier::test::Stdin::bytes,
                base)
                .exit_code == 0);
    const std::string params = "'http.proxy'='http://param:2' 'http.sslVerify=false' 'user.name'='it'\\''s'";
    EnvScope scope({{"HOME", dir.path()},
                    {"GIT_CONFIG_NOSYSTEM", "1"},
                    {"GIT_CONFIG_GLOBAL", "/dev/null"},
                    {"GIT_CONFIG_PARAMETERS", params},
                    {"GIT_CONFIG_COUNT", "1"},
                    {"GIT_CONFIG_KEY_0", "HTTP.sslCAInfo"},
                    {"GIT_CONFIG_VALUE_0", "/count/ca.pem"}});
    auto env = base;
    env.push_back("GIT_CONFIG_PARAMETERS=" + params);
    env.push_back("GIT_CONFIG_COUNT=1");
    env.push_back("GIT_CONFIG_KEY_0=HTTP.sslCAInfo");
    env.push_back("GIT_CONFIG_VALUE_0=/count/ca.pem");
    auto cfg = repo::GitConfig::open(repo);
    REQUIRE_MESSAGE(cfg.has_value(), (cfg ? std::string() : cfg.error().message));
    for (const std::string key : {"http.proxy", "http.sslverify", "user.name", "http.sslcainfo"}) {
      CHECK_MESSAGE(cfg->get(key) == git_get(repo, key, env), key);
    }
    CHECK(cfg->get("user.name") == std::optional<std::string>("it's"));
  }

  TEST_CASE("malformed GIT_CONFIG_PARAMETERS is an error, not a guess") {
    CHECK_FALSE(repo::parse_config_parameters("'unclosed").has_value());
    CHECK_FALSE(repo::parse_config_parameters("bare=word").has_value());
  }
}

}  // namespace integration_git_config
