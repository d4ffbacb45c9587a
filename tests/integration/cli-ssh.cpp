// cli-ssh.cpp — `git-courier push` to ssh remotes, up to the request (A5,
// H2): --auth ssh-key:FILE reaches the key loader and is refused for an
// https remote (and an https --auth for an ssh one); the ssh program comes
// from GIT_SSH_COMMAND, core.sshCommand or GIT_SSH as a program only, never
// with options; git's remote names and url.<base>.insteadOf work for ssh
// remotes, which are printed in their canonical form; what is the service's
// is refused with --via. Nothing here reaches an ssh server: every case is
// refused before a child exists (exit 2, usage), which is what is checked.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "fixture_server.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli_ssh {

using namespace courier;
using nlohmann::json;

namespace {

struct Cli {
  test::TempDir dir;
  std::string source;
  std::string lanes;

  Cli() {
    source = dir.path() + "/source";
    test::make_source_repo(source, 1);
    lanes = dir.path() + "/lanes";
  }

  // push --json --repo SOURCE ARGS... --lane-dir LANES --no-journal, with `env` added.
  test::RunResult push(std::vector<std::string> args, const std::vector<std::string>& env = {}) const {
    std::vector<std::string> a = {COURIER_BINARY, "push", "--json", "--repo", source};
    a.insert(a.end(), args.begin(), args.end());
    for (const std::string& s : {std::string("--lane-dir"), lanes, std::string("--no-journal")}) a.push_back(s);
    std::vector<std::string> e = test::cli_env();
    e.push_back("HOME=" + dir.path());
    e.push_back("GIT_CONFIG_NOSYSTEM=1");
    e.insert(e.end(), env.begin(), env.end());
    return test::run(a, {}, test::Stdin::bytes, e);
  }

  void git_config(const std::string& key, const std::string& value) const {
    auto r = test::run({"/usr/bin/git", "-C", source, "config", key, value}, {}, test::Stdin::bytes,
                       {"PATH=/usr/bin:/bin", "HOME=" + dir.path(), "GIT_CONFIG_NOSYSTEM=1"});
    REQUIRE(r.exit_code == 0);
  }
};

// The usage object's errors, as "field:code" and their messages joined.
struct Usage {
  std::vector<std::string> fields;
  std::string messages;
};

Usage usage(const test::RunResult& r) {
  REQUIRE_MESSAGE(r.exit_code == cli::kExitUsage, r.out << r.err);
  json j = json::parse(r.out, nullptr, false);
  REQUIRE_MESSAGE(!j.is_discarded(), r.out);
  Usage u;
  u.messages = j.value("message", "");
  for (const auto& e : j["errors"]) {
    u.fields.push_back(e["field"].get<std::string>() + ":" + e["code"].get<std::string>());
    u.messages += "\n" + e["message"].get<std::string>();
  }
  return u;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

TEST_SUITE("cli-ssh") {
  TEST_CASE("A5: --auth ssh-key:FILE reaches the key loader, whose refusal names the flag and the file") {
    Cli c;
    const std::string key = c.dir.path() + "/no-such-key";
    auto u = usage(c.push({"git@example.com:owner/r.git", "HEAD:refs/heads/main", "--auth", "ssh-key:" + key}));
    CHECK(u.fields == std::vector<std::string>{"auth:bad_field"});
    CHECK_MESSAGE(has(u.messages, "--auth ssh-key:" + key), u.messages);
    // No key at all: the field the request lacks, and the flag that gives it.
    auto none = usage(c.push({"git@example.com:owner/r.git", "HEAD:refs/heads/main"}));
    CHECK(none.fields == std::vector<std::string>{"ssh_key:missing_field"});
    CHECK_MESSAGE(has(none.messages, "ssh://git@example.com/~/owner/r.git"), none.messages);
    CHECK_MESSAGE(has(none.messages, "--auth ssh-key:FILE"), none.messages);
  }

  TEST_CASE("A5: an https credential for an ssh remote, or an SSH key for an https remote, is refused as --auth") {
    Cli c;
    const std::string token = c.dir.path() + "/token";
    auto https_auth =
        usage(c.push({"ssh://git@example.com/r.git", "HEAD:refs/heads/main", "--auth", "bearer:" + token}));
    CHECK(https_auth.fields == std::vector<std::string>{"auth:bad_field"});
    CHECK_MESSAGE(has(https_auth.messages, "give --auth ssh-key:FILE"), https_auth.messages);
    auto ssh_auth = usage(
        c.push({"https://example.com/r.git", "HEAD:refs/heads/main", "--auth", "ssh-key:" + c.dir.path() + "/k"}));
    CHECK(has(ssh_auth.fields, "auth:bad_field"));
    CHECK_MESSAGE(has(ssh_auth.messages, "--auth ssh-key:FILE is for ssh remotes"), ssh_auth.messages);
  }

  TEST_CASE("A5: the ssh program is GIT_SSH_COMMAND, core.sshCommand or GIT_SSH as git orders them, never options") {
    Cli c;
    const std::vector<std::string> args = {"ssh://git@example.com/r.git", "HEAD:refs/heads/main"};
    auto with_options = usage(c.push(args, {"GIT_SSH_COMMAND=ssh -o ProxyCommand=evil"}));
    CHECK(has(with_options.fields, "ssh_program:bad_field"));
    CHECK_MESSAGE(has(with_options.messages, "GIT_SSH_COMMAND 'ssh -o ProxyCommand=evil' gives ssh options"),
                  with_options.messages);
    CHECK_MESSAGE(has(with_options.messages, "fixed"), with_options.messages);
    // GIT_SSH_COMMAND wins over core.sshCommand, which wins over GIT_SSH.
    c.git_config("core.sshCommand", "ssh -i /k");
    auto config = usage(c.push(args, {"GIT_SSH=/no/such/ssh"}));
    CHECK_MESSAGE(has(config.messages, "core.sshCommand 'ssh -i /k'"), config.messages);
    auto env_first = usage(c.push(args, {"GIT_SSH_COMMAND=ssh"}));
    CHECK_FALSE(has(env_first.fields, "ssh_program:bad_field"));
    c.git_config("core.sshCommand", "ssh");
    // A program not found on PATH, and GIT_SSH's whole value taken as a program.
    auto missing = usage(c.push(args, {"GIT_SSH_COMMAND=no-such-ssh-program"}));
    CHECK(has(missing.fields, "ssh_program:bad_field"));
    CHECK_MESSAGE(has(missing.messages, "no executable 'no-such-ssh-program' on PATH"), missing.messages);
    auto found = usage(c.push(args, {"GIT_SSH_COMMAND=", "GIT_SSH=/no/such/ssh"}));
    CHECK_FALSE(has(found.fields, "ssh_program:bad_field"));  // core.sshCommand=ssh comes first
  }

  TEST_CASE("H2: git's remote names and url.<base>.insteadOf give ssh remotes, printed in canonical form") {
    Cli c;
    c.git_config("remote.origin.url", "git@Example.com:owner/repo.git");
    auto named = usage(c.push({"origin", "HEAD:refs/heads/main"}));
    CHECK_MESSAGE(has(named.messages, "ssh://git@example.com/~/owner/repo.git"), named.messages);
    c.git_config("url.git@example.com:.insteadOf", "gh:");
    auto rewritten = usage(c.push({"gh:owner/other.git", "HEAD:refs/heads/main"}));
    CHECK_MESSAGE(has(rewritten.messages, "ssh://git@example.com/~/owner/other.git"), rewritten.messages);
    c.git_config("url.ssh://git@push.example/.pushInsteadOf", "https://example.com/");
    auto push_rewritten = usage(c.push({"https://example.com/owner/r.git", "HEAD:refs/heads/main"}));
    CHECK_MESSAGE(has(push_rewritten.messages, "ssh://git@push.example/owner/r.git"), push_rewritten.messages);
  }

  TEST_CASE("A5: over ssh, --read-back is refused; with --via, --known-hosts and --ssh-passphrase-file are") {
    Cli c;
    auto read_back = usage(c.push({"ssh://git@example.com/r.git", "HEAD:refs/heads/main", "--read-back"}));
    CHECK(has(read_back.fields, "read_back:bad_field"));
    CHECK_MESSAGE(has(read_back.messages, "git ls-remote ssh://git@example.com/r.git"), read_back.messages);
    for (const std::string flag : {"--known-hosts", "--ssh-passphrase-file"}) {
      auto r = c.push({"--via", c.dir.path() + "/sock", flag, c.dir.path() + "/f", "ssh://git@example.com/r.git",
                       "HEAD:refs/heads/main"});
      CHECK(r.exit_code == cli::kExitUsage);
      CHECK_MESSAGE(has(r.out + r.err, flag + " cannot be given with --via"), r.out << r.err);
    }
  }
}

}  // namespace integration_cli_ssh
