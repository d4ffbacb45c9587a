// shared-lanes.cpp — rule S1 across entry points: push, serve, recover
// and the library default to one lane directory and serve and push to one
// journal, derived from the effective uid alone (never XDG_* or HOME), so a
// CLI push to a remote the service is delivering to waits for the lane.
//
// Every default is taken under the suite's test root (tests/support/main.cpp), never
// the host's /run/git-courier, /var/lib/git-courier or home directories;
// the test root itself is checked to be refused when it is not a private
// real directory of this user.
#include <doctest/doctest.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "seat/lane.hpp"
#include "service_support.hpp"
#include "support.hpp"
#include "sys/state_paths.hpp"
#include "wire/remote.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_shared_lanes {

using namespace courier;
using nlohmann::json;

namespace {

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

// The environments one user's processes meet: a login shell, cron (no
// XDG_RUNTIME_DIR), a service manager with another HOME, none of them.
using EnvCase = std::map<std::string, std::optional<std::string>>;
const std::vector<EnvCase> kEnvironments = {
    {{"XDG_RUNTIME_DIR", "/run/user/4242"}, {"XDG_STATE_HOME", "/home/someone/.state"}, {"HOME", "/home/someone"}},
    {{"XDG_RUNTIME_DIR", std::nullopt}, {"XDG_STATE_HOME", std::nullopt}, {"HOME", "/var/lib/elsewhere"}},
    {{"XDG_RUNTIME_DIR", std::nullopt}, {"XDG_STATE_HOME", std::nullopt}, {"HOME", std::nullopt}},
};

// Sets (or unsets) variables for one scope, restoring them after.
class ScopedEnv {
 public:
  explicit ScopedEnv(const EnvCase& vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      set(name, value);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) set(name, value);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  static void set(const std::string& name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

std::string test_root() {
  auto root = sys::test_root();
  REQUIRE_MESSAGE(root.has_value(), root.error().message);
  REQUIRE_MESSAGE(!root->empty(), "the suites run under a test root (tests/support/main.cpp)");
  return *root;
}

std::string text_of(const Result<std::string>& r) { return r ? *r : "error: " + r.error().message; }

// What the three defaults say, one line each, in the current environment.
std::string defaults_now() {
  return text_of(sys::default_lane_dir()) + "\n" + text_of(sys::default_journal_path()) + "\n" +
         text_of(courier::default_lane_dir()) + "\n";
}

// Runs `work` in a child as nobody:nogroup and returns what it wrote to the
// pipe; the child computes only, it creates nothing.
std::string as_nobody(const std::function<std::string()>& work) {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(p[0]);
    const gid_t groups[] = {kNogroup};
    if (::setgroups(1, groups) != 0 || ::setgid(kNogroup) != 0 || ::setuid(kNobody) != 0) ::_exit(3);
    const std::string out = work();
    const bool ok = ::write(p[1], out.data(), out.size()) == static_cast<ssize_t>(out.size());
    ::_exit(ok ? 0 : 4);
  }
  ::close(p[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  ::close(p[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), "the child as nobody failed: " << status);
  return out;
}

// `git-courier serve` with every default (no --journal, --lane-dir or
// --state) in an environment of its own: another HOME, another runtime dir.
struct Service {
  std::unique_ptr<test::LineProcess> proc;
  json listening;

  Service(const std::string& dir, const std::string& repo_root, const std::string& ca) {
    const std::string cmd = "exec /usr/bin/env -i PATH=/usr/bin:/bin LANG=C HOME=" + dir +
                            "/service-home XDG_RUNTIME_DIR=" + dir + "/service-run '" + test::test_root_env() +
                            "' \"$0\" serve \"$@\" 2>&1";
    proc = std::make_unique<test::LineProcess>(
        std::vector<std::string>{"/bin/sh", "-c", cmd, COURIER_BINARY, "--repo-root", repo_root, "--socket",
                                 dir + "/sock/serve.sock", "--ca-file", ca, "--workers", "2"});
    const std::string up = proc->wait_line("{\"event\":\"listening\"", 30'000);
    REQUIRE_MESSAGE(!up.empty(), "the service did not start listening:\n" << log());
    listening = json::parse(up, nullptr, false);
  }
  ~Service() {
    ::kill(proc->pid(), SIGTERM);
    proc->wait_exit();
  }
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;
  std::string log() {
    std::string out;
    for (const auto& l : proc->lines()) out += l + "\n";
    return out;
  }
};

// The argv of a CLI push with every default, run as a login shell or cron
// would: HOME, XDG_RUNTIME_DIR and XDG_STATE_HOME all unlike the service's.
std::vector<std::string> push_argv(const std::string& dir, const std::vector<std::string>& args) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string cmd = "exec /usr/bin/env -i PATH=/usr/bin:/bin LANG=C HOME=/nonexistent XDG_RUNTIME_DIR=" + dir +
                          "/login-run XDG_STATE_HOME=" + dir + "/login-state TMPDIR=" + (tmp ? tmp : "/tmp") + " '" +
                          test::test_root_env() + "' \"$0\" push \"$@\" 2>&1";
  std::vector<std::string> argv = {"/bin/sh", "-c", cmd, COURIER_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// The ids `git-courier log --json` lists with its default journal.
std::vector<std::string> logged_ids() {
  auto r = test::run({COURIER_BINARY, "log", "--json", "--limit", "1000"}, {}, test::Stdin::bytes,
                     {"PATH=/usr/bin:/bin", "LANG=C", "HOME=/"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  std::vector<std::string> ids;
  for (const auto& rec : json::parse(r.out)) ids.push_back(rec["id"].get<std::string>());
  return ids;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

TEST_SUITE("shared-lanes") {
  TEST_CASE(
      "S1: root's default lane directory and journal are /run/git-courier/lanes and "
      "/var/lib/git-courier/journal.db (under the test root) whatever XDG_RUNTIME_DIR and XDG_STATE_HOME and HOME say; "
      "the library's default is the same directory") {
    if (::geteuid() != 0) {
      MESSAGE("skipped: needs root (the suites run as root)");
      return;
    }
    const std::string root = test_root();
    const std::string expected = root + "/run/git-courier/lanes\n" + root + "/var/lib/git-courier/journal.db\n" + root +
                                 "/run/git-courier/lanes\n";
    for (const auto& env : kEnvironments) {
      ScopedEnv scoped(env);
      CHECK(defaults_now() == expected);
    }
    // An Executor given no lane directory (what `recover` and a host
    // program make) resolves the same one.
    ExecutorOptions eo;
    eo.workers = 1;
    eo.on_log = [](std::string_view) {};
    Executor ex(eo);
    CHECK(ex.lane_dir() == root + "/run/git-courier/lanes");
  }

  TEST_CASE(
      "S1: another user's default lane directory and journal are under its home directory in the password "
      "database whatever XDG_RUNTIME_DIR and XDG_STATE_HOME and HOME say") {
    if (::geteuid() != 0) {
      MESSAGE("skipped: needs root to become nobody");
      return;
    }
    const struct passwd* pw = ::getpwuid(kNobody);
    REQUIRE(pw != nullptr);
    std::string home = pw->pw_dir;
    while (!home.empty() && home.back() == '/') home.pop_back();
    const std::string state = home + "/.local/state/git-courier";
    // Outside the test root (root's directory is not nobody's): the paths
    // are computed only, nothing is created.
    const std::string out = as_nobody([] {
      std::string all;
      ::unsetenv(sys::kTestRootVariable);
      for (const auto& env : kEnvironments) {
        ScopedEnv scoped(env);
        all += defaults_now();
      }
      return all;
    });
    std::string expected;
    for (std::size_t i = 0; i < kEnvironments.size(); ++i) {
      expected += state + "/lanes\n" + state + "/journal.sqlite\n" + state + "/lanes\n";
    }
    CHECK(out == expected);
  }

  TEST_CASE(
      "S1 H1: a test root that is not a real private directory of this user is refused and never replaced by the "
      "real paths") {
    test::TempDir t;
    const std::string real = std::filesystem::canonical(t.path()).string();
    const std::string open = real + "/open";
    REQUIRE(::mkdir(open.c_str(), 0700) == 0);
    REQUIRE(::chmod(open.c_str(), 0777) == 0);
    const std::string link = real + "/link";
    REQUIRE(::symlink(real.c_str(), link.c_str()) == 0);
    const std::vector<std::string> refused = {"relative/dir", real + "/missing", open, link, real + "/", real + "/."};
    for (const auto& value : refused) {
      CAPTURE(value);
      ScopedEnv scoped({{sys::kTestRootVariable, value}});
      for (const auto& r : {sys::default_lane_dir(), sys::default_journal_path(), courier::default_lane_dir()}) {
        REQUIRE_FALSE(r.has_value());
        CHECK_MESSAGE(r.error().message.find("GIT_COURIER_TEST_ROOT is refused") != std::string::npos,
                      r.error().message);
      }
    }
    // The same directory, spelled as it is, is honoured.
    ScopedEnv scoped({{sys::kTestRootVariable, real}});
    CHECK(text_of(sys::default_journal_path()).rfind(real + "/", 0) == 0);
    // Owned by another user: refused, though it is a real 0700 directory.
    const std::string theirs = as_nobody([&] {
      ::setenv(sys::kTestRootVariable, real.c_str(), 1);
      return text_of(sys::default_lane_dir());
    });
    CHECK_MESSAGE(theirs.find("GIT_COURIER_TEST_ROOT is refused") != std::string::npos, theirs);
  }

  TEST_CASE(
      "S1: serve and push with their defaults in different environments use one lane directory and one journal: "
      "`log` lists the service's deliveries and the push's") {
    test::FixtureServer fx;
    test::TempDir dir;
    const std::string repos = dir.path() + "/repos";
    const std::string source = repos + "/source";
    const std::string tip = test::make_source_repo(source, 2);
    fx.create_bare_repo("r");
    Service svc(dir.path(), repos, fx.ca_file());
    const std::string root = test_root();
    const std::string lanes = ::geteuid() == 0 ? root + "/run/git-courier/lanes" : text_of(sys::default_lane_dir());
    const std::string journal =
        ::geteuid() == 0 ? root + "/var/lib/git-courier/journal.db" : text_of(sys::default_journal_path());
    CHECK(svc.listening["lane_dir"] == lanes);
    CHECK(svc.listening["journal"] == journal);
    test::LineProcess push(
        push_argv(dir.path(), {"--repo", source, "--remote", fx.url("r"), "--ref", "refs/heads/cli", "--rev", "HEAD",
                               "--ca-file", fx.ca_file(), "--delivery-id", "s1-env-cli", "--json"}));
    CHECK_MESSAGE(push.wait_exit() == 0, [&] {
      std::string out;
      for (const auto& l : push.lines()) out += l + "\n";
      return out;
    }());
    const auto key = wire::lane_key(fx.url("r"));
    REQUIRE(key.has_value());
    CHECK(std::filesystem::exists(lanes + "/" + seat::lane_lock_name(*key)));
    const test::Http posted = test::curl(
        dir.path() + "/sock/serve.sock", "POST", "/v1/deliveries",
        json{{"id", "s1-env-svc"}, {"repo", source}, {"remote", fx.url("r")}, {"ref", "refs/heads/svc"}, {"oid", tip}}
            .dump());
    REQUIRE_MESSAGE(posted.status == 202, posted.raw);
    test::lines_of(test::curl(dir.path() + "/sock/serve.sock", "GET", "/v1/deliveries/s1-env-svc/events").raw);
    const auto ids = logged_ids();
    CHECK(contains(ids, "s1-env-cli"));
    CHECK(contains(ids, "s1-env-svc"));
  }

  TEST_CASE(
      "S1: a CLI push to a remote whose delivery the service holds at its POST waits for the lane the service "
      "holds instead of starting a child of its own: one receive-pack POST in flight at most") {
    test::FixtureServer fx;
    test::TempDir dir;
    const std::string repos = dir.path() + "/repos";
    const std::string source = repos + "/source";
    const std::string tip = test::make_source_repo(source, 2);
    fx.create_bare_repo("r");
    Service svc(dir.path(), repos, fx.ca_file());
    const std::string socket = dir.path() + "/sock/serve.sock";
    // However the case ends, the held POST is let go before the service
    // stops: its drain would otherwise wait for it to its --drain-timeout.
    struct ReleaseHeld {
      test::FixtureServer& fx;
      ~ReleaseHeld() {
        try {
          fx.release();
        } catch (...) {  // a server already gone holds nothing
        }
      }
    } release_held{fx};
    fx.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    const test::Http posted = test::curl(
        socket, "POST", "/v1/deliveries",
        json{{"id", "s1-held"}, {"repo", source}, {"remote", fx.url("r")}, {"ref", "refs/heads/svc"}, {"oid", tip}}
            .dump());
    REQUIRE_MESSAGE(posted.status == 202, posted.raw);
    REQUIRE_MESSAGE(fx.wait_for_held(30'000).has_value(), svc.log());

    test::LineProcess push(push_argv(
        dir.path(), {"--repo", source, "--remote", fx.url("r"), "--ref", "refs/heads/cli", "--rev", "HEAD", "--ca-file",
                     fx.ca_file(), "--delivery-id", "s1-waiting", "--deadline", "60s", "--progress", "--json"}));
    // The fact: the push says it waits for the lane, held by the service.
    const std::string waiting = push.wait_line("waiting for lane", 30'000);
    INFO("push said:\n"
         << [&] {
              std::string out;
              for (const auto& l : push.lines()) out += l + "\n";
              return out;
            }());
    REQUIRE_MESSAGE(!waiting.empty(), "the push did not wait for the service's lane");
    CHECK_MESSAGE(waiting.find("held by pid " + std::to_string(svc.proc->pid()) + ")") != std::string::npos, waiting);
    test::Counts during = fx.count();
    CHECK(during.active_receive_pack == 1);
    CHECK(during.count("POST /r.git/git-receive-pack") == 1);

    fx.release();
    CHECK(push.wait_exit() == 0);
    const auto done = test::lines_of(test::curl(socket, "GET", "/v1/deliveries/s1-held/events").raw);
    REQUIRE_FALSE(done.empty());
    CHECK(done.back()["outcome"]["outcome"] == "delivered");
    test::Counts after = fx.count();
    CHECK(after.count("POST /r.git/git-receive-pack") == 2);
    CHECK(after.peak_receive_pack == 1);
    const auto ids = logged_ids();
    CHECK(contains(ids, "s1-held"));
    CHECK(contains(ids, "s1-waiting"));
  }
}

}  // namespace integration_shared_lanes
