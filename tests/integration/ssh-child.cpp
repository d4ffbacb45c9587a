// ssh-child.cpp — rule T5 in the child: a delivery to an ssh:// remote goes
// over one ssh connection (OpenSSH's ssh, started by the child inside its
// kill domain) to a real sshd serving real bare repositories; git push over
// ssh to the same server is the comparison. The parent's agent is stood in
// for by OpenSSH's own ssh-agent holding the test key.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "sshd_server.hpp"
#include "supervisor/supervisor.hpp"
#include "support.hpp"
#include "sys/clock.hpp"
#include "sys/events.hpp"
#include "sys/process.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_ssh_child {

using namespace courier;
using sys::kNsPerMs;
using sys::mono_now_ns;

namespace {

const std::string kMain = "refs/heads/main";

// OpenSSH's own agent holding the test key, in the foreground as the test's
// child: it stands in for the parent's agent (A5) at the child's level.
struct StandInAgent {
  std::string socket;
  std::unique_ptr<test::LineProcess> agent;

  StandInAgent(const std::string& dir, const std::string& key) : socket(dir + "/agent.sock") {
    agent = std::make_unique<test::LineProcess>(std::vector<std::string>{"/usr/bin/ssh-agent", "-D", "-a", socket});
    if (agent->wait_line("SSH_AUTH_SOCK=", 10'000).empty()) throw std::runtime_error("ssh-agent did not start");
    auto added = test::run({"/usr/bin/ssh-add", "-q", key}, {}, test::Stdin::bytes,
                           {"PATH=/usr/bin:/bin", "SSH_AUTH_SOCK=" + socket});
    if (added.exit_code != 0) throw std::runtime_error("ssh-add: " + added.err);
  }
  ~StandInAgent() {
    agent->kill_hard();
    agent->wait_exit();
  }
};

// A test key, a running sshd that accepts it, and known_hosts naming the
// server's host key under [127.0.0.1]:PORT.
struct SshSite {
  test::TempDir dir;
  std::string key;
  std::string known_hosts;
  test::SshdServer sshd;

  StandInAgent agent;
  std::string source;
  std::string tip;

  explicit SshSite(int commits = 3) : key(make_key(dir.path())), sshd(start(dir.path(), key)), agent(dir.path(), key) {
    known_hosts = dir.path() + "/known_hosts";
    test::write_file(known_hosts, sshd.known_hosts_line() + "\n");
    source = dir.path() + "/source";
    tip = test::make_source_repo(source, commits);
  }

  std::string alias() const { return "[127.0.0.1]:" + std::to_string(sshd.port()); }

  // The server's host key as ssh names it: "ssh-ed25519 SHA256:...".
  std::string host_key_fingerprint() const {
    auto r = test::run({"/usr/bin/ssh-keygen", "-l", "-f", dir.path() + "/sshd/host_key.pub"});
    // "256 SHA256:... comment (ED25519)"
    const auto sp = r.out.find(' ');
    return "ssh-ed25519 " + r.out.substr(sp + 1, r.out.find(' ', sp + 1) - sp - 1);
  }

  std::string rev(const std::string& spec) const { return test::git_ok({"rev-parse", spec}, source); }

  static std::string remote_ref(const std::string& repo, const std::string& ref = kMain) {
    auto r = test::git({"--git-dir", repo, "rev-parse", "--verify", "-q", ref});
    return r.ok() ? r.out.substr(0, r.out.find('\n')) : std::string();
  }

  // How many ssh connections authenticated so far.
  long logins() const {
    const std::string log = sshd.log();
    long n = 0;
    for (auto at = log.find("Accepted publickey"); at != std::string::npos; at = log.find("Accepted publickey", at + 1))
      ++n;
    return n;
  }

  // A delivery driven as the parent drives it: the shipped binary as the
  // child, a hand-made job with its ssh part.
  supervisor::SupervisorOptions options(const std::string& repo, std::vector<RefUpdate> updates,
                                        std::int64_t budget_ms = 30'000) const {
    supervisor::SupervisorOptions o;
    o.child_program = COURIER_BINARY;
    o.job.repo = source;
    o.job.remote = sshd.url(repo);
    o.job.updates = std::move(updates);
    o.job.ssh = protocol::SshJob{"/usr/bin/ssh", agent.socket, known_hosts, key + ".pub", alias()};
    o.deadline = mono_now_ns() + budget_ms * kNsPerMs;
    o.on_stderr = [](std::string_view) {};
    return o;
  }

  static std::string make_key(const std::string& dir) {
    const std::string key = dir + "/key";
    auto r = test::run({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", key});
    if (r.exit_code != 0) throw std::runtime_error("ssh-keygen: " + r.err);
    return key;
  }

  static test::SshdServer start(const std::string& dir, const std::string& key) {
    return test::SshdServer::start(dir + "/sshd", {test::read_file(key + ".pub")});
  }

  // A bare repository on the server's side.
  std::string bare(const std::string& name) {
    const std::string path = dir.path() + "/" + name + ".git";
    test::git_ok({"init", "-q", "--bare", "-b", "main", path});
    return path;
  }

  // git's own ssh, with the same key and known hosts as the child's.
  std::vector<std::string> git_ssh_env() const {
    return {"GIT_SSH_COMMAND=/usr/bin/ssh -F /dev/null -o IdentitiesOnly=yes -o IdentityFile=" + key +
            " -o UserKnownHostsFile=" + known_hosts + " -o StrictHostKeyChecking=yes -o BatchMode=yes"};
  }
};

}  // namespace

TEST_SUITE("ssh-child") {
  TEST_CASE("T5: the test sshd serves git push over ssh to a bare repository") {
    SshSite site;
    const std::string src = site.dir.path() + "/src";
    const std::string tip = test::make_source_repo(src, 2);
    const std::string repo = site.bare("r");
    auto pushed = test::git({"push", site.sshd.url(repo), "main:refs/heads/main"}, src, site.git_ssh_env());
    REQUIRE_MESSAGE(pushed.ok(), pushed.err, site.sshd.log());
    CHECK(test::git_ok({"--git-dir", repo, "rev-parse", "refs/heads/main"}) == tip);
    CHECK(site.sshd.log().find("Accepted publickey for " + site.sshd.user()) != std::string::npos);
  }

  TEST_CASE("T5: a new ref goes over one ssh connection, fsck-clean, as git push over ssh puts it") {
    SshSite site;
    const std::string repo = site.bare("r");
    const long before = site.logins();
    std::atomic<int> gates{0};
    auto o = site.options(repo, {RefUpdate{kMain, site.tip}});
    o.before_post = [&gates](const protocol::Check&) -> Result<void> {
      ++gates;
      return {};
    };
    supervisor::Supervisor sup(o);
    const Outcome out = sup.run();
    REQUIRE_MESSAGE(out.kind == OutcomeKind::delivered, out.reason, "\n", site.sshd.log());
    CHECK(gates == 1);
    CHECK(out.remote_effect == RemoteEffect::applied);
    CHECK(site.logins() - before == 1);  // one connection
    CHECK(SshSite::remote_ref(repo) == site.tip);
    auto fsck = test::git({"--git-dir", repo, "fsck", "--strict"});
    CHECK_MESSAGE(fsck.ok(), fsck.err);
    // git push over ssh to the same server: the same ref, the same objects.
    const std::string twin = site.bare("twin");
    auto pushed = test::git({"push", site.sshd.url(twin), "main:" + kMain}, site.source, site.git_ssh_env());
    REQUIRE_MESSAGE(pushed.ok(), pushed.err);
    CHECK(SshSite::remote_ref(twin) == SshSite::remote_ref(repo));
    CHECK(test::git_ok({"--git-dir", twin, "rev-list", "--objects", "--all"}) ==
          test::git_ok({"--git-dir", repo, "rev-list", "--objects", "--all"}));
  }

  TEST_CASE("T5: a fast-forward over ssh with every pack engine, and a non-fast-forward refused") {
    SshSite site(5);
    const std::string git = test::find_on_path("git");
    struct Engine {
      std::string name;
      std::optional<std::string> pack_git;
      bool pack_auto;
      std::string used;
    };
    // libgit2 spools the pack; git's streams into ssh as it is built; the
    // automatic choice takes libgit2 for a push this small.
    const std::vector<Engine> engines = {{"libgit2", std::nullopt, false, "libgit2"},
                                         {"git streamed", git, false, "git"},
                                         {"automatic", git, true, "libgit2"}};
    for (std::size_t k = 0; k < engines.size(); ++k) {
      CAPTURE(engines[k].name);
      const std::string repo = site.bare("ff" + std::to_string(k));
      test::git_ok({"push", repo, site.rev("HEAD~3") + ":" + kMain}, site.source);
      auto o = site.options(repo, {RefUpdate{kMain, site.tip}});
      o.job.pack_git = engines[k].pack_git;
      o.job.pack_auto = engines[k].pack_auto;
      std::string err;
      o.on_stderr = [&err](std::string_view e) { err.append(e); };
      supervisor::Supervisor sup(o);
      const Outcome out = sup.run();
      REQUIRE_MESSAGE(out.kind == OutcomeKind::delivered, out.reason, "\n", err);
      CHECK(out.pack_engine == engines[k].used);
      CHECK(SshSite::remote_ref(repo) == site.tip);
      auto fsck = test::git({"--git-dir", repo, "fsck", "--strict"});
      CHECK_MESSAGE(fsck.ok(), fsck.err);
    }
    // The remote moved on: the gated id is behind it, and receive-pack's
    // own rule refuses the move (git's words), the ref unchanged.
    const std::string repo = site.bare("nff");
    test::git_ok({"push", repo, site.tip + ":" + kMain}, site.source);
    test::git_ok({"--git-dir", repo, "config", "receive.denyNonFastForwards", "true"});
    auto o = site.options(repo, {RefUpdate{kMain, site.rev("HEAD~2"), UpdateMode::force}});
    supervisor::Supervisor sup(o);
    const Outcome out = sup.run();
    CHECK_MESSAGE(out.kind == OutcomeKind::rejected, out.reason);
    CHECK(SshSite::remote_ref(repo) == site.tip);
  }

  TEST_CASE("T5: a pre-receive hook's words come back over ssh and the refusal names them") {
    SshSite site;
    const std::string repo = site.bare("r");
    const std::string hook = repo + "/hooks/pre-receive";
    test::write_file(hook, "#!/bin/sh\ncat >/dev/null\necho 'policy: no pushes on Thursdays'\nexit 1\n");
    REQUIRE(::chmod(hook.c_str(), 0755) == 0);
    supervisor::Supervisor sup(site.options(repo, {RefUpdate{kMain, site.tip}}));
    const Outcome out = sup.run();
    CHECK_MESSAGE(out.kind == OutcomeKind::rejected, out.reason);
    bool said = false;
    for (const auto& m : out.remote_messages)
      said = said || m.find("policy: no pushes on Thursdays") != std::string::npos;
    CHECK_MESSAGE(said, out.reason);
    CHECK(out.reason.find("policy: no pushes on Thursdays") != std::string::npos);
    CHECK(SshSite::remote_ref(repo).empty());
  }

  TEST_CASE("T5: a deletion over ssh sends no pack and removes the ref") {
    SshSite site;
    const std::string repo = site.bare("r");
    test::git_ok({"push", repo, site.tip + ":refs/heads/gone"}, site.source);
    auto o = site.options(repo, {RefUpdate{"refs/heads/gone", std::string(40, '0')}});
    supervisor::Supervisor sup(o);
    const Outcome out = sup.run();
    REQUIRE_MESSAGE(out.kind == OutcomeKind::delivered, out.reason);
    CHECK(SshSite::remote_ref(repo, "refs/heads/gone").empty());
    CHECK_FALSE(out.pack_engine.has_value());
  }

  TEST_CASE("T5: an unknown host key is refused, the key's fingerprint named, nothing sent") {
    SshSite site;
    const std::string repo = site.bare("r");
    test::git_ok({"push", repo, site.rev("HEAD~1") + ":" + kMain}, site.source);
    test::write_file(site.known_hosts, "");
    const long before = site.logins();
    bool gated = false;
    auto o = site.options(repo, {RefUpdate{kMain, site.tip}});
    o.before_post = [&gated](const protocol::Check&) -> Result<void> {
      gated = true;
      return {};
    };
    supervisor::Supervisor sup(o);
    const Outcome out = sup.run();
    CHECK_MESSAGE(out.kind == OutcomeKind::transport_failed, out.reason);
    CHECK_MESSAGE(out.reason.find(site.host_key_fingerprint()) != std::string::npos, out.reason);
    CHECK(out.reason.find("not known") != std::string::npos);
    CHECK(out.remote_effect == RemoteEffect::none);
    CHECK_FALSE(gated);
    CHECK(site.logins() == before);  // no key offered, no receive-pack ran
    CHECK(SshSite::remote_ref(repo) == site.rev("HEAD~1"));
    // The known hosts were not written to (verified, never learned).
    CHECK(test::read_file(site.known_hosts).empty());
  }

  TEST_CASE("T5: a changed host key is refused, the new key's fingerprint named, nothing sent") {
    SshSite site;
    const std::string repo = site.bare("r");
    std::filesystem::create_directories(site.dir.path() + "/other");
    const std::string other = SshSite::make_key(site.dir.path() + "/other");
    test::write_file(site.known_hosts, site.alias() + " " + test::read_file(other + ".pub"));
    const long before = site.logins();
    supervisor::Supervisor sup(site.options(repo, {RefUpdate{kMain, site.tip}}));
    const Outcome out = sup.run();
    CHECK_MESSAGE(out.kind == OutcomeKind::transport_failed, out.reason);
    CHECK_MESSAGE(out.reason.find(site.host_key_fingerprint()) != std::string::npos, out.reason);
    CHECK(out.reason.find("changed") != std::string::npos);
    CHECK(out.remote_effect == RemoteEffect::none);
    CHECK(site.logins() == before);
    CHECK(SshSite::remote_ref(repo).empty());
  }

  TEST_CASE("T5: nothing of the update reaches the remote before the check at upload, and a refused check sends none") {
    SshSite site;
    const std::string repo = site.bare("r");
    const std::string mark = site.dir.path() + "/received";
    const std::string hook = repo + "/hooks/pre-receive";
    test::write_file(hook, "#!/bin/sh\ncat >/dev/null\n: > '" + mark + "'\nexit 1\n");
    REQUIRE(::chmod(hook.c_str(), 0755) == 0);
    auto o = site.options(repo, {RefUpdate{kMain, site.tip}});
    // The parent's gate, held open for a while: an update written before it
    // would reach receive-pack and run its hook meanwhile (ssh lives, the
    // child waits for the answer). Then the gate refuses.
    bool received_before_gate = false;
    o.before_post = [&](const protocol::Check&) -> Result<void> {
      const sys::MonoNs until = mono_now_ns() + 2'000 * kNsPerMs;
      while (!received_before_gate && mono_now_ns() < until) {
        received_before_gate = ::access(mark.c_str(), F_OK) == 0;
        (void)sys::wait_readable_until({}, mono_now_ns() + 20 * kNsPerMs);
      }
      return fail(Errc::journal_failed, "post_started could not be journalled: the test refuses it");
    };
    supervisor::Supervisor sup(o);
    const Outcome out = sup.run();
    CHECK_MESSAGE(!received_before_gate, "the remote received the update before the check at upload");
    CHECK_MESSAGE(out.kind == OutcomeKind::failed, out.reason);
    CHECK(out.remote_effect == RemoteEffect::none);
    CHECK(SshSite::remote_ref(repo).empty());
  }

  TEST_CASE("T5: a key the server does not authorize ends the delivery auth_failed, nothing sent") {
    SshSite site;
    const std::string repo = site.bare("r");
    std::filesystem::create_directories(site.dir.path() + "/stranger");
    const std::string stranger = SshSite::make_key(site.dir.path() + "/stranger");
    StandInAgent agent(site.dir.path() + "/stranger", stranger);
    auto o = site.options(repo, {RefUpdate{kMain, site.tip}});
    o.job.ssh->agent_socket = agent.socket;
    o.job.ssh->identity = stranger + ".pub";
    supervisor::Supervisor sup(o);
    const Outcome out = sup.run();
    CHECK_MESSAGE(out.kind == OutcomeKind::auth_failed, out.reason);
    CHECK(out.reason.find("Permission denied") != std::string::npos);
    CHECK(out.remote_effect == RemoteEffect::none);
    CHECK(site.logins() == 0);
    CHECK(SshSite::remote_ref(repo).empty());
  }

  TEST_CASE("T5: an ssh:// remote without the job's ssh part is refused before anything starts") {
    SshSite site;
    const std::string repo = site.bare("r");
    auto o = site.options(repo, {RefUpdate{kMain, site.tip}});
    o.job.ssh.reset();
    supervisor::Supervisor sup(o);
    const Outcome out = sup.run();
    CHECK_MESSAGE(out.kind == OutcomeKind::transport_failed, out.reason);
    CHECK(out.reason.find("ssh") != std::string::npos);
    CHECK(site.logins() == 0);
  }

  TEST_CASE(
      "T5: a server that holds the push: the deadline ends ssh with the child, nothing left running, ref unchanged") {
    SshSite site;
    const std::string repo = site.bare("r");
    test::git_ok({"push", repo, site.rev("HEAD~1") + ":" + kMain}, site.source);
    const std::string fifo = site.dir.path() + "/hold";
    const std::string mark = site.dir.path() + "/held";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string hook = repo + "/hooks/pre-receive";
    test::write_file(hook, "#!/bin/sh\ncat >/dev/null\n: > '" + mark + "'\nread -r go < '" + fifo +
                               "'\n[ \"$go\" = yes ] && exit 0\nexit 1\n");
    REQUIRE(::chmod(hook.c_str(), 0755) == 0);
    auto o = site.options(repo, {RefUpdate{kMain, site.tip}}, 6'000);
    o.job.pack_git = test::find_on_path("git");
    supervisor::Supervisor sup(o);
    Outcome out;
    std::thread t([&] { out = sup.run(); });
    // The hook announces itself: the update has reached the remote. What
    // runs in the child's kill domain now: the child and its ssh.
    std::vector<pid_t> domain;
    bool ssh_in_domain = false;
    for (int i = 0; i < 1000 && ::access(mark.c_str(), F_OK) != 0; ++i) {
      (void)sys::wait_readable_until({}, mono_now_ns() + 10 * kNsPerMs);
    }
    const bool held = ::access(mark.c_str(), F_OK) == 0;
    if (held && sup.child_pid() > 0) {
      domain = sys::pids_in_group(static_cast<pid_t>(sup.child_pid()));
      for (const auto& p : test::processes()) {
        const bool member = std::find(domain.begin(), domain.end(), p.pid) != domain.end();
        ssh_in_domain = ssh_in_domain || (member && p.exe == "/usr/bin/ssh");
      }
    }
    t.join();
    REQUIRE_MESSAGE(held, "the update never reached the remote: " << out.reason);
    CHECK(ssh_in_domain);
    CHECK_MESSAGE(out.kind == OutcomeKind::deadline_killed, out.reason);
    CHECK(out.remote_effect == RemoteEffect::possible);
    CHECK(out.timings.confirmed != 0);
    for (pid_t p : domain) {
      const char st = sys::proc_state(p);
      CHECK_MESSAGE((st == 0 || st == 'Z'), "pid ", p, " of the kill domain outlived the stop");
    }
    // Nothing of the kill domain runs (an orphan's zombie waits for init).
    for (pid_t p : sys::pids_in_group(static_cast<pid_t>(out.child.pid))) {
      const char st = sys::proc_state(p);
      CHECK_MESSAGE((st == 0 || st == 'Z'), "pid ", p, " of the kill domain still runs (", st, ")");
    }
    // Released, the hook refuses: the remote ref never moved.
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      (void)!::write(fd, "no\n", 3);
      ::close(fd);
    }
    CHECK(SshSite::remote_ref(repo) == site.rev("HEAD~1"));
  }
}

}  // namespace integration_ssh_child
