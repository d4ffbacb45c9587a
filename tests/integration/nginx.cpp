// nginx.cpp — proves fixtures/git-server (nginx over TLS, fcgiwrap, git
// http-backend) with the real git client: pushes land and read back intact,
// a repeated push is up to date, a 2000-commit history goes through, TLS
// verifies only against the server's own CA, a second start reports the
// running server, and stopping leaves none of its processes running.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "fixture_server.hpp"
#include "nginx_server.hpp"
#include "support.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_nginx {

using namespace courier;
using test::NginxServer;

namespace {

// Tests need nginx and fcgiwrap; scripts/bootstrap installs them, but a
// machine without them skips with the reason printed.
bool skipped(const NginxServer& s) {
  if (s.available()) return false;
  MESSAGE("skipped: the nginx git server is unavailable: " << s.unavailable_reason());
  return true;
}

std::vector<std::string> with_ca(const NginxServer& s) { return {"GIT_SSL_CAINFO=" + s.ca_file()}; }

// `git push URL main:refs/heads/main` from `src`, certificate checks on.
test::GitResult push(const NginxServer& s, const std::string& src, const std::string& repo,
                     const std::vector<std::string>& env) {
  return test::git({"-c", "http.sslVerify=true", "push", s.url(repo), "main:refs/heads/main"}, src, env);
}

// The ref in the server's bare repository, or "" when it does not exist.
std::string server_ref(const NginxServer& s, const std::string& repo, const std::string& ref = "refs/heads/main") {
  auto r = test::git({"--git-dir", s.repo_path(repo), "rev-parse", "--verify", "--quiet", ref});
  if (!r.ok()) return {};
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

std::string exe_of(pid_t pid) {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).filename().string();
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_SUITE("nginx") {
  TEST_CASE("a real git push over TLS lands in an empty bare repository and reads back intact") {
    NginxServer s;
    if (skipped(s)) return;
    const std::string src = s.scratch_dir() + "/src";
    const std::string tip = test::make_source_repo(src, 3);
    s.create_bare_repo("small");
    CHECK(server_ref(s, "small").empty());

    // Without the throwaway CA the certificate does not verify: TLS is real.
    const auto untrusted = push(s, src, "small", {});
    CHECK_FALSE(untrusted.ok());
    CHECK(server_ref(s, "small").empty());

    const auto start = std::chrono::steady_clock::now();
    const auto pushed = push(s, src, "small", with_ca(s));
    REQUIRE_MESSAGE(pushed.ok(), pushed.err, "\n", s.log());
    test::report("nginx small push", "git push (3 commits)", ms_since(start), "ms");
    CHECK(server_ref(s, "small") == tip);
    CHECK(test::git_ok({"--git-dir", s.repo_path("small"), "rev-list", "--count", "main"}) == "3");
    const auto fsck = test::git({"--git-dir", s.repo_path("small"), "fsck", "--strict", "--no-dangling"});
    CHECK_MESSAGE(fsck.ok(), fsck.err);
  }

  TEST_CASE("a second push of the same tip is up to date and changes nothing") {
    NginxServer s;
    if (skipped(s)) return;
    const std::string src = s.scratch_dir() + "/src";
    const std::string tip = test::make_source_repo(src, 2);
    s.create_bare_repo("again");
    const auto first = push(s, src, "again", with_ca(s));
    REQUIRE_MESSAGE(first.ok(), first.err, "\n", s.log());
    const auto second = push(s, src, "again", with_ca(s));
    REQUIRE_MESSAGE(second.ok(), second.err, "\n", s.log());
    CHECK_MESSAGE(second.err.find("Everything up-to-date") != std::string::npos, second.err);
    CHECK(server_ref(s, "again") == tip);
  }

  TEST_CASE("a push of a generated 2000-commit history goes through and fscks") {
    NginxServer s;
    if (skipped(s)) return;
    const auto gen_start = std::chrono::steady_clock::now();
    const test::GeneratedRepo src = test::generate_repo(s.scratch_dir() + "/gen", {"--commits", "2000"});
    test::report("nginx 2000-commit push", "gen-repo --commits 2000", ms_since(gen_start), "ms");
    REQUIRE(src.commits == 2000);
    s.create_bare_repo("big");

    const auto start = std::chrono::steady_clock::now();
    const auto pushed = push(s, src.dir, "big", with_ca(s));
    REQUIRE_MESSAGE(pushed.ok(), pushed.err, "\n", s.log());
    test::report("nginx 2000-commit push", "git push (" + std::to_string(src.objects) + " objects)", ms_since(start),
                 "ms");
    CHECK(server_ref(s, "big") == src.head);
    CHECK(test::git_ok({"--git-dir", s.repo_path("big"), "rev-list", "--count", "main"}) == "2000");
    const auto fsck = test::git({"--git-dir", s.repo_path("big"), "fsck", "--no-dangling"});
    CHECK_MESSAGE(fsck.ok(), fsck.err);
  }

  TEST_CASE("starting again on a running server's directory reports the same server") {
    NginxServer s;
    if (skipped(s)) return;
    const auto again = test::run_git_server({"start", s.state_dir()});
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(again.out ==
          "port=" + std::to_string(s.port()) + " ca_file=" + s.ca_file() + " url_base=" + s.url_base() + "\n");
    const auto status = test::run_git_server({"status", s.state_dir()});
    CHECK(status.exit_code == 0);
    CHECK(status.out.find("nginx_pid=" + std::to_string(s.nginx_pid()) + " ") != std::string::npos);
    CHECK(status.out.find("fcgiwrap_pid=" + std::to_string(s.fcgiwrap_pid())) != std::string::npos);
  }

  TEST_CASE("after the handle is destroyed no nginx or fcgiwrap process it started still runs") {
    std::vector<pid_t> pids;
    {
      NginxServer s;
      if (skipped(s)) return;
      // A push first, so backends have run under fcgiwrap too.
      const std::string src = s.scratch_dir() + "/src";
      test::make_source_repo(src, 1);
      s.create_bare_repo("stop");
      const auto pushed = push(s, src, "stop", with_ca(s));
      REQUIRE_MESSAGE(pushed.ok(), pushed.err, "\n", s.log());

      pids = s.pids();
      CHECK(std::count(pids.begin(), pids.end(), s.nginx_pid()) == 1);
      CHECK(std::count(pids.begin(), pids.end(), s.fcgiwrap_pid()) == 1);
      CHECK(exe_of(s.nginx_pid()) == "nginx");
      CHECK(exe_of(s.fcgiwrap_pid()) == "fcgiwrap");
      CHECK(pids.size() >= 4);  // nginx master and workers, fcgiwrap and its children
    }
    // Gone, or a zombie waiting for init; a recycled pid runs something else.
    for (pid_t pid : pids) {
      const char state = sys::proc_state(pid);
      const std::string exe = state == 0 || state == 'Z' ? std::string() : exe_of(pid);
      CHECK_MESSAGE((exe != "nginx" && exe != "fcgiwrap"), "pid ", pid, " (", exe, ") still runs, state ", state);
    }
  }
}

}  // namespace integration_nginx
