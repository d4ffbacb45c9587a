// cli-e2e.cpp — the shipped CLI driven as a user would: against nginx +
// fcgiwrap + git http-backend over TLS, and against the fixture server where
// a request must be held. Exit codes, --json, Ctrl-C, two CLIs on one lane,
// and bad input that must cost nothing.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <nlohmann/json.hpp>

#include "auth/credential_minter.hpp"
#include "cli/args.hpp"
#include "cli/output.hpp"
#include "fixture_server.hpp"
#include "nginx_server.hpp"
#include "support.hpp"
#include "sys/cgroup.hpp"
#include "sys/clock.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli_e2e {

using namespace courier;
using nlohmann::json;

namespace {

struct Cli {
  test::TempDir dir;
  std::string source;
  std::string tip;
  std::string lanes;

  explicit Cli(int commits = 3) {
    source = dir.path() + "/source";
    tip = test::make_source_repo(source, commits);
    lanes = dir.path() + "/lanes";
  }

  std::vector<std::string> push_args(const std::string& remote, const std::string& ca, const std::string& rev = "HEAD",
                                     std::vector<std::string> extra = {}) const {
    std::vector<std::string> a = {COURIER_BINARY,    "push",  "--repo", source,      "--remote", remote,       "--ref",
                                  "refs/heads/main", "--rev", rev,      "--ca-file", ca,         "--lane-dir", lanes};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  test::RunResult push(const std::string& remote, const std::string& ca, const std::string& rev = "HEAD",
                       std::vector<std::string> extra = {}) const {
    return test::run(push_args(remote, ca, rev, std::move(extra)), {}, test::Stdin::bytes, test::cli_env());
  }

  std::string rev(const std::string& spec) const { return test::git_ok({"rev-parse", spec}, source); }
};

std::string ref_of(const std::string& git_dir) {
  auto r = test::git({"--git-dir", git_dir, "rev-parse", "--verify", "-q", "refs/heads/main"});
  return r.ok() ? r.out.substr(0, 40) : std::string();
}

mode_t mode_of_tmp() {
  struct stat st {};
  REQUIRE(::stat("/tmp", &st) == 0);
  return st.st_mode;
}

json parse_json(const std::string& out) {
  json j = json::parse(out, nullptr, false);
  REQUIRE_MESSAGE(!j.is_discarded(), "stdout is not one JSON object: ", out);
  return j;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("the CLI delivers, updates, reports up to date and rejected against nginx over TLS, with its exit codes") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Cli c(4);
    nginx.create_bare_repo("e2e");
    const std::string remote = nginx.url("e2e");
    auto first = c.push(remote, nginx.ca_file(), "HEAD~2");
    CHECK_MESSAGE(first.exit_code == cli::kExitOk, first.err);
    CHECK(ref_of(nginx.repo_path("e2e")) == c.rev("HEAD~2"));
    auto update = c.push(remote, nginx.ca_file(), "HEAD", {"--json"});
    CHECK_MESSAGE(update.exit_code == cli::kExitOk, update.err);
    json j = parse_json(update.out);
    CHECK(j["outcome"] == "delivered");
    CHECK(j["old_oid"] == c.rev("HEAD~2"));
    CHECK(j["objects"] == 6);
    CHECK(test::git({"--git-dir", nginx.repo_path("e2e"), "fsck", "--strict"}).ok());
    auto again = c.push(remote, nginx.ca_file(), "HEAD", {"--json"});
    CHECK(again.exit_code == cli::kExitOk);
    CHECK(parse_json(again.out)["outcome"] == "up_to_date");
    test::git_ok({"--git-dir", nginx.repo_path("e2e"), "config", "receive.denyNonFastForwards", "true"});
    // Forced: the remote's receive.denyNonFastForwards refuses it, not the
    // fast-forward rule the command applies by default.
    auto rewind = c.push(remote, nginx.ca_file(), "HEAD~1", {"--json", "--force"});
    CHECK(rewind.exit_code == cli::kExitRejected);
    json r = parse_json(rewind.out);
    CHECK(r["outcome"] == "rejected");
    CHECK(r["reason"].get<std::string>().find("non-fast-forward") != std::string::npos);
    CHECK(ref_of(nginx.repo_path("e2e")) == c.tip);
  }

  TEST_CASE("--pack-engine git delivers a history and then an update through nginx, read back fsck-clean") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Cli c(4);
    nginx.create_bare_repo("engine");
    const std::string remote = nginx.url("engine");
    auto first = c.push(remote, nginx.ca_file(), "HEAD~2", {"--pack-engine", "git", "--json"});
    CHECK_MESSAGE(first.exit_code == cli::kExitOk, first.err);
    CHECK(parse_json(first.out)["objects"] == 6);  // 2 commits, their trees and blobs
    auto update = c.push(remote, nginx.ca_file(), "HEAD", {"--pack-engine", "git", "--json"});
    CHECK_MESSAGE(update.exit_code == cli::kExitOk, update.err);
    json j = parse_json(update.out);
    CHECK(j["outcome"] == "delivered");
    CHECK(j["objects"] == 6);
    CHECK(ref_of(nginx.repo_path("engine")) == c.tip);
    CHECK(test::git({"--git-dir", nginx.repo_path("engine"), "fsck", "--strict"}).ok());
  }

  TEST_CASE("--json prints exactly one object with the documented schema") {
    test::NginxServer nginx;
    if (!nginx.available()) {
      MESSAGE("skipped: " << nginx.unavailable_reason());
      return;
    }
    Cli c(2);
    nginx.create_bare_repo("schema");
    auto r = c.push(nginx.url("schema"), nginx.ca_file(), "HEAD", {"--json", "--quiet"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    json j = parse_json(r.out);
    for (const char* key : {"outcome", "seat", "remote", "ref", "oid", "old_oid", "reason", "objects", "bytes_sent",
                            "timings_ms", "child"}) {
      CHECK_MESSAGE(j.contains(key), "missing key ", key);
    }
    for (const char* key : {"total", "pending", "spawn", "advertise", "pack", "upload", "stop_confirm"}) {
      CHECK_MESSAGE(j["timings_ms"].contains(key), "missing timings_ms.", key);
      CHECK(j["timings_ms"][key].is_number_integer());
    }
    for (const char* key : {"pid", "exit_code", "signal", "reaped", "eof", "stop_scope"})
      CHECK(j["child"].contains(key));
    CHECK_MESSAGE(j["child"]["stop_scope"] == "descendants", "the CLI did not subreap its delivery's orphans");
    CHECK(j["seat"] == "released");
    CHECK(j["child"]["reaped"] == true);
    CHECK(j["child"]["eof"] == true);
    CHECK(j["oid"] == c.tip);
    CHECK(r.err.empty());  // --quiet: nothing but errors
  }

  TEST_CASE("a --deadline shorter than a held request ends with exit 4, the child gone and the ref unchanged") {
    test::FixtureServer server;
    Cli c(2);
    server.create_bare_repo("held");
    server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    auto r = c.push(server.url("held"), server.ca_file(), "HEAD", {"--deadline", "1500ms", "--json"});
    CHECK(r.exit_code == cli::kExitDeadline);
    json j = parse_json(r.out);
    CHECK(j["outcome"] == "deadline_killed");
    CHECK(j["seat"] == "released");
    CHECK(j.contains("deadline_overrun_ms"));
    CHECK_FALSE(sys::pid_exists(static_cast<pid_t>(j["child"]["pid"].get<std::int64_t>())));
    server.reset_faults();
    server.release();
    CHECK(ref_of(server.repo_path("held")).empty());
  }

  TEST_CASE("J2: Ctrl-C during a held POST revokes: exit 5, the child gone, the ref unchanged, no claim of rollback") {
    test::FixtureServer server;
    Cli c(2);
    test::TempDir tmp;  // the CLI's stderr is kept here
    const std::string err_file = tmp.path() + "/stderr";
    server.create_bare_repo("sigint");
    server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    server.respond(test::RequestMatch::next("POST", "git-receive-pack"), 500);
    // exec: the pid signalled is the CLI's own; its stderr goes to the file.
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" 2>\"$0\"", err_file};
    for (auto& a : c.push_args(server.url("sigint"), server.ca_file(), "HEAD", {"--json"})) argv.push_back(a);
    test::LineProcess cli(argv);
    REQUIRE(server.wait_for_held(20'000).has_value());  // the POST has begun: the remote may apply it
    ::kill(cli.pid(), SIGINT);
    ::kill(cli.pid(), SIGINT);  // a second Ctrl-C does not skip the confirmation
    const std::string out = cli.wait_line("{", 20'000);
    const int code = cli.wait_exit();
    const std::string err = test::read_file(err_file);
    CAPTURE(err);
    CHECK(code == cli::kExitRevoked);
    json j = parse_json(out);
    CHECK(j["outcome"] == "revoked");
    CHECK(j["child"]["reaped"] == true);
    CHECK(j["child"]["eof"] == true);
    CHECK_FALSE(sys::pid_exists(static_cast<pid_t>(j["child"]["pid"].get<std::int64_t>())));
    // What was observed: the POST reached the server and no answer was read.
    CHECK_MESSAGE(j["remote_effect"] == "possible", "the revoked POST was reported with remote_effect ",
                  j["remote_effect"].dump());
    // What the CLI told the user: a cancellation, not a rollback, and that
    // the remote may have applied it.
    CHECK(err.find("revoking the delivery and confirming the child's stop (cancelling is not rollback)") !=
          std::string::npos);
    CHECK(err.find("The remote may have applied it") != std::string::npos);
    for (const char* claim : {"nothing had been sent", "rolled back", "undone", "reverted", "not applied"}) {
      CHECK_MESSAGE(err.find(claim) == std::string::npos, "the CLI claimed a rollback: \"", claim, "\"");
    }
    server.release();
    CHECK(ref_of(server.repo_path("sigint")).empty());
  }

  TEST_CASE("A4: SIGHUP during a held POST revokes like SIGTERM: exit 5, outcome revoked, no scratch or cgroup left") {
    test::FixtureServer server;
    Cli c(2);
    test::TempDir tmp;  // the CLI's TMPDIR: its scratch directories are made here
    server.create_bare_repo("hup");
    server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    std::vector<std::string> argv = {"/usr/bin/env", "TMPDIR=" + tmp.path()};
    for (auto& a : c.push_args(server.url("hup"), server.ca_file(), "HEAD", {"--json"})) argv.push_back(a);
    test::LineProcess cli(argv);
    REQUIRE(server.wait_for_held(20'000).has_value());
    const std::string prefix = "git-courier-" + std::to_string(cli.pid()) + "-";
    ::kill(cli.pid(), SIGHUP);
    const std::string out = cli.wait_line("{", 20'000);
    const int code = cli.wait_exit();
    CHECK_MESSAGE(code == cli::kExitRevoked, "SIGHUP did not end the command as a revocation (exit " << code << ")");
    REQUIRE_MESSAGE(!out.empty(), "no outcome was printed after SIGHUP");
    json j = parse_json(out);
    CHECK(j["outcome"] == "revoked");
    CHECK(j["reason"].get<std::string>().find("SIGHUP") != std::string::npos);
    CHECK(j["child"]["reaped"] == true);
    CHECK_FALSE(sys::pid_exists(static_cast<pid_t>(j["child"]["pid"].get<std::int64_t>())));
    // The scratch parent stays (this user's, private); nothing is left in it.
    std::vector<std::string> left;
    const std::string scratch_parent = tmp.path() + "/git-courier-" + std::to_string(::geteuid());
    for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
      if (e.path() != scratch_parent) left.push_back(e.path().string());
    }
    for (const auto& e : std::filesystem::directory_iterator(scratch_parent)) left.push_back(e.path().string());
    if (auto parent = sys::Cgroup::find_parent()) {
      for (const auto& e : std::filesystem::directory_iterator(*parent)) {
        if (e.path().filename().string().rfind(prefix, 0) != 0) continue;
        left.push_back(e.path().string());
        std::filesystem::remove(e.path());  // leave no trace even when the check fails
      }
    }
    std::string listing;
    for (const auto& l : left) listing += " " + l;
    CHECK_MESSAGE(left.empty(), "left behind after SIGHUP:" << listing);
    server.release();
    CHECK(ref_of(server.repo_path("hup")).empty());
  }

  TEST_CASE("two CLIs on one lane: the second waits, then delivers; the server never sees two receive-packs at once") {
    test::FixtureServer server;
    Cli c(3);
    server.create_bare_repo("shared");
    server.hold(test::RequestMatch::next("POST", "git-receive-pack"));
    test::LineProcess one(c.push_args(server.url("shared"), server.ca_file(), "HEAD~1", {"--json"}));
    auto held = server.wait_for_held(20'000);
    REQUIRE(held.has_value());
    test::LineProcess two(c.push_args(server.url("shared"), server.ca_file(), "HEAD", {"--json"}));
    // The second has no request at the server while the first holds the lane.
    // It is waiting for the lane lock: its advertisement GET cannot have come.
    const long gets_before = server.count().count("GET /shared.git/info/refs");
    server.release(held->request);
    const std::string out1 = one.wait_line("{", 20'000);
    const std::string out2 = two.wait_line("{", 20'000);
    CHECK(one.wait_exit() == 0);
    CHECK(two.wait_exit() == 0);
    CHECK(parse_json(out1)["outcome"] == "delivered");
    CHECK(parse_json(out2)["outcome"] == "delivered");
    CHECK(gets_before == 1);
    CHECK(server.count().peak_receive_pack == 1);
    CHECK(ref_of(server.repo_path("shared")) == c.tip);
  }

  TEST_CASE("H1 H2: bad input: exit 2, a clear message, no child, no request, nothing written") {
    test::FixtureServer server;
    Cli c(2);
    server.create_bare_repo("bad");
    const std::string remote = server.url("bad");
    const std::string ca = server.ca_file();
    struct Case {
      std::vector<std::string> args;
      std::string needle;
    };
    const std::string repo = c.source;
    const std::string key = c.dir.path() + "/node.pem";
    REQUIRE(test::run({COURIER_BINARY, "keygen", "--out", key}, {}, test::Stdin::bytes, test::cli_env()).exit_code ==
            0);
    const mode_t tmp_mode = mode_of_tmp() & 07777;
    auto base = [&](std::vector<std::string> a) {
      std::vector<std::string> out = {COURIER_BINARY, "push", "--lane-dir", c.lanes};
      out.insert(out.end(), a.begin(), a.end());
      return out;
    };
    const std::vector<Case> cases = {
        {base({"--repo", repo, "--remote", remote, "--ref", "refs/heads/main", "--rev", "HEAD", "--bogus"}),
         "unknown option"},
        {base({"--repo", repo, "--remote", remote, "--ref", "refs/heads/main", "--rev", "HEAD", "--deadline", "soon"}),
         "--deadline"},
        {base({"--repo", c.dir.path() + "/missing", "--remote", remote, "--ref", "refs/heads/main", "--rev", "HEAD"}),
         "no repository"},
        {base({"--repo", repo, "--remote", remote, "--ref", "refs/heads/main", "--rev", "no-such-branch"}),
         "unknown revision"},
        {base({"--repo", repo, "--remote", remote, "--ref", "refs/heads/main", "--oid", std::string(40, 'e')}),
         "not in the repository"},
        {base({"--repo", repo, "--remote", "not a url", "--ref", "refs/heads/main", "--rev", "HEAD"}),
         "malformed remote URL"},
        {base({"--repo", repo, "--remote", "ftp://127.0.0.1/r.git", "--ref", "refs/heads/main", "--rev", "HEAD"}),
         "only https"},
        {base({"--repo", repo, "--remote", "http://192.0.2.1/r.git", "--ref", "refs/heads/main", "--rev", "HEAD"}),
         "only https"},
        {base({"--repo", repo, "--remote", "http://127.0.0.1:9/r.git", "--ref", "refs/heads/main", "--rev", "HEAD"}),
         "--allow-http-loopback"},
        {base({"--repo", repo, "--remote", remote, "--ref", "main", "--rev", "HEAD~1"}), "not a full refname"},
        {base({"--repo", repo, "--remote", remote, "--ref", "refs/heads/main", "--rev", "HEAD", "--ca-file",
               "/nonexistent"}),
         "--ca-file"},
        {base({"--repo", repo, "--remote", remote, "--ref", "refs/heads/main", "--rev", "HEAD", "--auth", "password"}),
         "--auth"},
        {base({"--repo", repo, "--remote", remote, "--ref", "refs/heads/main", "--rev", "HEAD", "--pack-engine",
               "jgit"}),
         "--pack-engine"},
        {base({"--repo", repo, "--remote", remote, "--ref", "refs/heads/main"}), "needs --rev REV or --oid OID"},
        // H1: a lane directory others may write to is refused, never chmodded.
        {base({"--repo", repo, "--remote", remote, "--ref", "refs/heads/main", "--rev", "HEAD", "--lane-dir", "/tmp"}),
         "writable by other users"},
        // H2: ambiguous spellings are usage errors naming the canonical one,
        // also with per-request tokens (once a protocol fault).
        {base({"--repo", repo, "--remote", "https://127.0.0.1:" + std::to_string(server.port()) + "/./bad.git", "--ref",
               "refs/heads/main", "--rev", "HEAD", "--auth", "key:" + key}),
         "Write it as " + remote},
        {base({"--repo", repo, "--remote", "https://127.0.0.1:" + std::to_string(server.port()) + "//bad.git", "--ref",
               "refs/heads/main", "--rev", "HEAD"}),
         "Write it as " + remote},
        {base({"--repo", repo, "--remote", "https://127.0.0.1:" + std::to_string(server.port()) + "/%62ad.git", "--ref",
               "refs/heads/main", "--rev", "HEAD"}),
         "Write it as " + remote},
        {base({"--repo", repo, "--remote", "https://alice:S3cretPW@" + remote.substr(8), "--ref", "refs/heads/main",
               "--rev", "HEAD", "--json"}),
         "carries a password"},
    };
    for (const auto& k : cases) {
      CAPTURE(k.needle);
      auto r = test::run(k.args, {}, test::Stdin::bytes, test::cli_env());
      CHECK(r.exit_code == cli::kExitUsage);
      CHECK_MESSAGE(r.err.find(k.needle) != std::string::npos, r.err);
      // stdout: nothing, or with --json the usage object (never the secret).
      const bool json_asked = std::find(k.args.begin(), k.args.end(), "--json") != k.args.end();
      CHECK(r.out.empty() != json_asked);
      if (json_asked) CHECK(parse_json(r.out)["outcome"] == "usage");
      CHECK_MESSAGE(r.out.find("S3cretPW") == std::string::npos, r.out);
      CHECK_MESSAGE(r.err.find("S3cretPW") == std::string::npos, r.err);
    }
    CHECK_MESSAGE((mode_of_tmp() & 07777) == tmp_mode, "the mode of /tmp changed");
    CHECK(server.count().total == 0);
    CHECK_FALSE(std::filesystem::exists(c.lanes));
    CHECK(ref_of(server.repo_path("bad")).empty());
  }

  TEST_CASE("A1 A2: keygen, then --auth key:FILE: every leg carries its own verified token; a wrong key gets 401") {
    Cli c(2);
    const std::string key = c.dir.path() + "/node.pem";
    auto kg = test::run({COURIER_BINARY, "keygen", "--out", key}, {}, test::Stdin::bytes, test::cli_env());
    REQUIRE_MESSAGE(kg.exit_code == 0, kg.err);
    CHECK(kg.out.find("kid (JWK thumbprint): ") != std::string::npos);
    auto again = test::run({COURIER_BINARY, "keygen", "--out", key}, {}, test::Stdin::bytes, test::cli_env());
    CHECK(again.exit_code == cli::kExitUsage);  // never overwrites a key
    test::FixtureOptions fo;
    fo.verify_key = key;
    fo.replay_dir = c.dir.path() + "/replay";
    test::FixtureServer server(fo);
    server.create_bare_repo("signed");
    auto ok = c.push(server.url("signed"), server.ca_file(), "HEAD", {"--auth", "key:" + key, "--json"});
    CHECK_MESSAGE(ok.exit_code == 0, ok.err);
    CHECK(parse_json(ok.out)["outcome"] == "delivered");
    auto journal = server.journal();
    REQUIRE(journal.size() == 2);
    std::set<std::string> tokens;
    for (const auto& e : journal) {
      auto h = e.header("Authorization");
      REQUIRE(h.has_value());
      CHECK(h->rfind("Bearer ", 0) == 0);
      tokens.insert(*h);
      CHECK(e.status == 200);
    }
    CHECK(tokens.size() == 2);  // one token per leg
    const std::string other = c.dir.path() + "/other.pem";
    REQUIRE(test::run({COURIER_BINARY, "keygen", "--out", other}, {}, test::Stdin::bytes, test::cli_env()).exit_code ==
            0);
    test::git_ok({"-C", c.source, "commit", "-q", "--allow-empty", "-m", "more"});
    auto denied = c.push(server.url("signed"), server.ca_file(), "HEAD", {"--auth", "key:" + other, "--json"});
    CHECK(denied.exit_code == cli::kExitFailed);
    CHECK(parse_json(denied.out)["outcome"] == "auth_failed");
    auto missing =
        c.push(server.url("signed"), server.ca_file(), "HEAD", {"--auth", "key:" + c.dir.path() + "/none.pem"});
    CHECK(missing.exit_code == cli::kExitUsage);
  }

  TEST_CASE(
      "D1 A1: auth files that could block, flood or mislead are refused at once with exit 2: a FIFO, /dev/zero, a "
      "symlink, a file over 64 KiB, a key others can read") {
    Cli c(2);
    const std::string d = c.dir.path();
    REQUIRE(::mkfifo((d + "/fifo").c_str(), 0600) == 0);
    const std::string key = d + "/node.pem";
    REQUIRE(test::run({COURIER_BINARY, "keygen", "--out", key}, {}, test::Stdin::bytes, test::cli_env()).exit_code ==
            0);
    std::filesystem::create_symlink(key, d + "/key-link.pem");
    std::filesystem::create_symlink(d + "/fifo", d + "/fifo-link");
    test::write_file(d + "/token", "tok\n");
    std::filesystem::create_symlink(d + "/token", d + "/token-link");
    test::write_file(d + "/huge", std::string(64 * 1024 + 1, 'a'));
    test::write_file(d + "/shared.pem", test::read_file(key));
    REQUIRE(::chmod((d + "/shared.pem").c_str(), 0644) == 0);
    struct Case {
      std::string auth;
      std::string needle;
    };
    const std::vector<Case> cases = {
        {"bearer:" + d + "/fifo", "not a regular file (a FIFO)"},
        {"key:" + d + "/fifo", "not a regular file (a FIFO)"},
        {"bearer:" + d + "/fifo-link", "symbolic link"},
        {"bearer:/dev/zero", "not a regular file (a character device)"},
        {"key:/dev/zero", "not a regular file (a character device)"},
        {"bearer:" + d + "/token-link", "symbolic link"},
        {"key:" + d + "/key-link.pem", "symbolic link"},
        {"bearer:" + d + "/huge", "larger than 65536 bytes"},
        {"key:" + d + "/huge", "larger than 65536 bytes"},
        {"key:" + d + "/shared.pem", "chmod 600 " + d + "/shared.pem"},
    };
    for (const auto& k : cases) {
      CAPTURE(k.auth);
      // Bounded from outside, so that the old behaviour (blocking on the
      // FIFO, reading /dev/zero until memory ran out) fails this case
      // instead of hanging or exhausting the machine.
      std::vector<std::string> argv = {"/bin/sh", "-c", "ulimit -v 1048576; exec timeout -s KILL 20 \"$0\" \"$@\""};
      for (auto& a :
           c.push_args("https://127.0.0.1:9/r.git", d + "/token", "HEAD", {"--auth", k.auth, "--deadline", "2s"})) {
        argv.push_back(a);
      }
      const auto t0 = sys::mono_now_ns();
      auto r = test::run(argv, {}, test::Stdin::bytes, test::cli_env());
      const double ms = sys::ns_to_ms(sys::mono_now_ns() - t0);
      std::string shown = k.auth;
      if (auto at = shown.find(d); at != std::string::npos) shown.replace(at, d.size(), "DIR");
      test::report("auth file refused", "--auth " + shown, ms, "ms");
      CHECK_MESSAGE(r.exit_code == cli::kExitUsage, "exit " << r.exit_code << " signal " << r.signal << ": " << r.err);
      CHECK_MESSAGE(r.err.find(k.needle) != std::string::npos, "the refusal does not name what the file is: " << r.err);
    }
    CHECK_FALSE(std::filesystem::exists(c.lanes));
    // The key itself (0600, from keygen) is accepted: the refusals are about the files, not the key.
    auto good = c.push("https://127.0.0.1:9/r.git", d + "/token", "HEAD", {"--auth", "key:" + key, "--deadline", "2s"});
    CHECK(good.exit_code != cli::kExitUsage);
  }

  TEST_CASE(
      "D1: --rev syntaxes that search the history (':/text', '^{/text}') are refused with exit 2 before any child") {
    Cli c(3);
    for (const std::string rev : {":/commit", "HEAD^{/commit}", ":/no-such-message", "HEAD:file"}) {
      CAPTURE(rev);
      auto r = c.push("https://127.0.0.1:9/r.git", c.source + "/.git/HEAD", rev);
      CHECK(r.exit_code == cli::kExitUsage);
      CHECK_MESSAGE(r.err.find("search the history") != std::string::npos,
                    "a history-searching revision was looked up instead of refused: " << r.err);
    }
    CHECK_FALSE(std::filesystem::exists(c.lanes));
    // A reflog selector with a time in it is not a history search.
    auto reflog = c.push("https://127.0.0.1:9/r.git", c.source + "/.git/HEAD", "HEAD@{2000-01-01 10:00:00}",
                         {"--deadline", "2s"});
    CHECK_MESSAGE(reflog.err.find("search the history") == std::string::npos, reflog.err);
  }

  TEST_CASE(
      "D1: with --auth credential the outcome is printed before `git credential approve`, which has its own short "
      "bound") {
    Cli c(2);
    const std::string d = c.dir.path();
    const std::string fifo = d + "/release";
    const std::string mark = d + "/released";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // The helper answers `get` and blocks in `store` (run by approve) until
    // the test writes a line into the FIFO.
    test::write_file(d + "/helper.sh",
                     "#!/bin/sh\ncat >/dev/null\ncase \"$1\" in\n"
                     "  get) echo username=alice; echo password=pw ;;\n"
                     "  store) read -r go < '" +
                         fifo + "' && echo released > '" + mark +
                         "' ;;\n"
                         "esac\n");
    REQUIRE(::chmod((d + "/helper.sh").c_str(), 0755) == 0);
    test::write_file(d + "/gitconfig", "[credential]\n\thelper = " + d + "/helper.sh\n");
    test::FixtureOptions fo;
    fo.basic_auth = "alice:pw";
    test::FixtureServer server(fo);
    server.create_bare_repo("r");
    auto cli_argv = [&](const std::string& rev) {
      std::vector<std::string> argv = {"/usr/bin/env", "GIT_CONFIG_GLOBAL=" + d + "/gitconfig", "GIT_CONFIG_NOSYSTEM=1",
                                       "HOME=" + d};
      for (auto& a : c.push_args(server.url("r"), server.ca_file(), rev, {"--auth", "credential", "--json"})) {
        argv.push_back(a);
      }
      return argv;
    };
    {
      // Released only once the outcome is on stdout: the helper can finish
      // (and leave its mark) only if the outcome came first.
      test::LineProcess cli(cli_argv("HEAD~1"));
      const std::string out = cli.wait_line("{", 30'000);
      REQUIRE_MESSAGE(!out.empty(), "no outcome on stdout");
      CHECK(parse_json(out)["outcome"] == "delivered");
      sys::ScopedFd release(::open(fifo.c_str(), O_RDWR | O_CLOEXEC));  // never blocks, even with no reader yet
      REQUIRE(release);
      REQUIRE(::write(release.get(), "go\n", 3) == 3);
      CHECK(cli.wait_exit() == 0);
      CHECK_MESSAGE(std::filesystem::exists(mark),
                    "the outcome was printed only after the credential helper's store had been stopped");
    }
    {
      // Never released: the command still ends within the settle bound of printing its outcome.
      test::LineProcess cli(cli_argv("HEAD"));
      const std::string out = cli.wait_line("{", 30'000);
      const auto printed = sys::mono_now_ns();
      REQUIRE_MESSAGE(!out.empty(), "no outcome on stdout");
      CHECK(parse_json(out)["outcome"] == "delivered");
      CHECK(cli.wait_exit() == 0);
      const auto after = sys::mono_now_ns() - printed;
      test::report("credential settle bound", "outcome printed to exit, helper stuck in store", sys::ns_to_ms(after),
                   "ms");
      CHECK_MESSAGE(after <= auth::kCredentialSettleBound + 1'000 * sys::kNsPerMs,
                    "approve outlived its bound by " << sys::ns_to_ms(after - auth::kCredentialSettleBound) << " ms");
    }
  }

  TEST_CASE("exit codes follow the outcome table") {
    using K = OutcomeKind;
    const std::vector<std::pair<K, int>> table = {{K::delivered, 0},
                                                  {K::up_to_date, 0},
                                                  {K::rejected, 1},
                                                  {K::transport_failed, 3},
                                                  {K::auth_failed, 3},
                                                  {K::spawn_failed, 3},
                                                  {K::failed, 3},
                                                  {K::deadline_killed, 4},
                                                  {K::revoked, 5},
                                                  {K::cancelled_no_dispatch, 5},
                                                  {K::protocol_fault, 6},
                                                  {K::unreaped, 7},
                                                  {K::wait_failed, 7},
                                                  {K::cleanup_unbounded, 7},
                                                  {K::cleanup_unobserved, 7},
                                                  {K::domain_populated, 7}};
    for (auto [kind, code] : table) {
      CAPTURE(outcome_name(kind));
      CHECK(cli::exit_code_for(kind) == code);
    }
  }
}

}  // namespace integration_cli_e2e
