// ssh-delivery.cpp — SSH deliveries through the library, end to end: the
// Executor with the shipped binary as its child, the parent as the only
// agent, Debian's sshd on loopback with its own host key serving real bare
// repositories: custody of the key while the remote holds the push (A1,
// A5), the deadline and a revocation during that hold (T5, D1, A4), an
// unknown or changed host key (T5), and a delivery compared with git push
// over ssh to the same server.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "held_remote.hpp"
#include "service_support.hpp"
#include "sshd_server.hpp"
#include "support.hpp"
#include "supervisor/scratch_area.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_ssh_delivery {

using namespace courier;
using sys::kNsPerMs;

namespace {

const std::string kMain = "refs/heads/main";

// Runs a program that must succeed; its standard output.
std::string run_ok(const std::vector<std::string>& argv) {
  const test::RunResult r = test::run(argv);
  REQUIRE_MESSAGE(r.exit_code == 0, argv.front() << " failed: " << r.err);
  return r.out;
}

// RFC 4648 base64, as OpenSSH writes key files (padding ignored).
std::string base64_decode(std::string_view text) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0;
  int held = 0;
  for (char c : text) {
    const auto v = kAlphabet.find(c);
    if (v == std::string::npos) continue;
    bits = (bits << 6) | static_cast<unsigned>(v);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out.push_back(static_cast<char>((bits >> held) & 0xff));
    }
  }
  return out;
}

// The 32-byte Ed25519 seed of an unencrypted OpenSSH key file: the private
// section holds string(64: seed || public) right after string(32: public).
std::string ed25519_seed(const std::string& key_file, const std::string& pub_line) {
  const std::string text = test::read_file(key_file);
  std::string b64;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("-----", 0) != 0) b64 += line;
  }
  const std::string blob = base64_decode(b64);
  const std::string pub_blob = base64_decode(
      pub_line.substr(pub_line.find(' ') + 1, pub_line.find(' ', pub_line.find(' ') + 1) - pub_line.find(' ') - 1));
  const std::string pub = pub_blob.substr(pub_blob.size() - 32);
  const std::string priv_len("\0\0\0\x40", 4);
  for (std::size_t at = blob.find(priv_len); at != std::string::npos; at = blob.find(priv_len, at + 1)) {
    if (at + 4 + 64 <= blob.size() && blob.compare(at + 4 + 32, 32, pub) == 0) return blob.substr(at + 4, 32);
  }
  FAIL("no Ed25519 private part in " << key_file);
  return {};
}

// Every readable mapping of `pid` searched for `needle`; the process may be
// gone meanwhile (then nothing is found in it, said by the caller).
bool memory_holds(pid_t pid, const std::string& needle, std::size_t& scanned) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const int mem = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (mem < 0) return false;
  bool found = false;
  std::string buf;
  for (std::string line; !found && std::getline(maps, line);) {
    unsigned long lo = 0, hi = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) != 3 || perms[0] != 'r') continue;
    if (line.find("[vvar]") != std::string::npos || line.find("[vsyscall]") != std::string::npos) continue;
    buf.resize(hi - lo);
    const ssize_t n = ::pread(mem, buf.data(), buf.size(), static_cast<off_t>(lo));
    if (n <= 0) continue;
    scanned += static_cast<std::size_t>(n);
    found = std::string_view(buf.data(), static_cast<std::size_t>(n)).find(needle) != std::string_view::npos;
  }
  ::close(mem);
  return found;
}

// The pids of `root` and all its descendants, from /proc's children lists.
std::vector<pid_t> tree_of(pid_t root) {
  std::vector<pid_t> out, todo{root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    out.push_back(p);
    std::error_code ec;
    for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(p) + "/task", ec)) {
      std::ifstream kids(t.path() / "children");
      for (pid_t k; kids >> k;) todo.push_back(k);
    }
  }
  return out;
}

// Whether any regular file under `root`, or open by `pid`, holds `needle`
// (files up to 64 MiB; the count of files read goes to `files`).
bool files_hold(const std::string& root, pid_t pid, const std::string& needle, std::size_t& files) {
  std::vector<std::filesystem::path> paths;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) paths.push_back(it->path());
  }
  for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    paths.push_back(fd.path());
  }
  for (const auto& p : paths) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) continue;
    ++files;
    if (test::read_file(p.string()).find(needle) != std::string::npos) return true;
  }
  return false;
}

std::string cmdline_of(pid_t pid) {
  std::string s = test::read_file("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& c : s) c = c == '\0' ? ' ' : c;
  return s;
}

// Processes of this machine whose command line names `needle` and that
// were started as `program` (argv[0]).
std::vector<pid_t> running(const std::string& program, const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    const std::string cmd = cmdline_of(pid);
    if (cmd.rfind(program + " ", 0) == 0 && cmd.find(needle) != std::string::npos) out.push_back(pid);
  }
  return out;
}

using test::HeldRemote;

struct Setup {
  test::TempDir dir;
  std::string key_file;
  std::string pub_line;
  std::shared_ptr<const SshKey> key;
  std::unique_ptr<test::SshdServer> sshd;
  std::string known_hosts;
  std::string source;
  std::string tip;

  Setup() {
    key_file = dir.path() + "/id_ed25519";
    run_ok({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", key_file});
    pub_line = test::read_file(key_file + ".pub");
    pub_line = pub_line.substr(0, pub_line.find('\n'));
    auto loaded = load_ssh_key(key_file);
    REQUIRE_MESSAGE(loaded.has_value(), (loaded ? "" : loaded.error().message));
    key = *loaded;
    sshd = std::make_unique<test::SshdServer>(test::SshdServer::start(dir.path() + "/sshd", {pub_line}));
    known_hosts = dir.path() + "/known_hosts";
    test::write_file(known_hosts, sshd->known_hosts_line() + "\n");
    source = dir.path() + "/source";
    tip = test::make_source_repo(source, 3);
  }

  std::string bare(const std::string& name) {
    const std::string path = dir.path() + "/repos/" + name + ".git";
    test::git_ok({"init", "-q", "--bare", path});
    return path;
  }

  ExecutorOptions executor_options() const {
    ExecutorOptions o;
    o.lane_dir = dir.path() + "/lanes";
    o.child_program = COURIER_BINARY;
    o.on_child_stderr = [](std::string_view) {};
    o.on_log = [](std::string_view) {};
    return o;
  }

  DeliveryRequest request(const std::string& repo_path, const std::string& oid, std::int64_t budget_ms = 30'000) {
    DeliveryRequest r;
    r.repo = source;
    r.remote = sshd->url(repo_path);
    r.ref = kMain;
    r.oid = oid;
    r.budget = std::chrono::milliseconds(budget_ms);
    r.ssh_key = key;
    r.known_hosts = known_hosts;
    return r;
  }

  // A delivery stopped (`kind`) while the remote's hook held its push: the
  // stop confirmed, the outcome possible, no ssh of the delivery left
  // running, and once the hook refuses, the remote's ref unchanged.
  void stopped_while_held(const Outcome& o, OutcomeKind kind, const std::string& remote, const HeldRemote& held) {
    CHECK_MESSAGE(o.kind == kind, outcome_name(o.kind), ": ", o.reason);
    CHECK(o.child.reaped);
    CHECK(o.remote_effect == RemoteEffect::possible);
    CHECK(running("ssh", remote).empty());
    CHECK(running("/usr/bin/ssh", remote).empty());
    held.release("no");
    CHECK(remote_ref(remote).empty());
  }

  std::string remote_ref(const std::string& repo_path, const std::string& ref = kMain) {
    auto r = test::git({"--git-dir", repo_path, "rev-parse", "--verify", "-q", ref});
    return r.ok() ? r.out.substr(0, r.out.find('\n')) : std::string();
  }
};

}  // namespace

TEST_SUITE("ssh-delivery") {
  TEST_CASE(
      "T5: an SSH delivery through the library lands the ref as git push over ssh does on the same server, and "
      "the server's repository passes git fsck --strict") {
    Setup s;
    const std::string ours = s.bare("ours");
    Executor ex(s.executor_options());
    const Outcome o = ex.submit(s.request(ours, s.tip)).wait();
    REQUIRE_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(o.remote_effect == RemoteEffect::applied);
    CHECK(s.remote_ref(ours) == s.tip);
    CHECK(test::git({"--git-dir", ours, "fsck", "--strict"}).ok());
    // git push over ssh, the same key and known hosts, to a twin.
    const std::string theirs = s.bare("theirs");
    const std::string ssh_cmd =
        "ssh -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -o IdentityFile=" + s.key_file +
        " -o UserKnownHostsFile=" + s.known_hosts + " -o StrictHostKeyChecking=yes";
    auto pushed =
        test::git({"-c", "core.sshCommand=" + ssh_cmd, "push", s.sshd->url(theirs), s.tip + ":" + kMain}, s.source);
    REQUIRE_MESSAGE(pushed.ok(), pushed.err);
    CHECK(s.remote_ref(theirs) == s.remote_ref(ours));
    CHECK(test::git_ok({"--git-dir", ours, "rev-list", "--objects", "--all"}) ==
          test::git_ok({"--git-dir", theirs, "rev-list", "--objects", "--all"}));
  }

  TEST_CASE(
      "A1 A5: while the remote's hook holds an SSH push, no process of the delivery (the child, ssh) holds the "
      "private key in its memory, argv or environment, and no file the child can see holds it") {
    Setup s;
    const std::string seed = ed25519_seed(s.key_file, s.pub_line);
    REQUIRE(seed.size() == 32);
    const std::string remote = s.bare("held");
    HeldRemote held(s.dir.path(), remote);
    ExecutorOptions eo = s.executor_options();
    std::atomic<std::int64_t> child{0};
    DeliveryRequest r = s.request(remote, s.tip, 60'000);
    r.on_event = [&child](const DeliveryEvent& e) {
      if (e.kind == DeliveryEvent::Kind::dispatched) child = e.child_pid;
    };
    Executor ex(eo);
    auto h = ex.submit(r);
    // The fact waited for: the hook ran, so ssh authenticated through the
    // agent and the update commands reached the server.
    REQUIRE(test::wait_for_fact([&] { return held.entered(); }, 30'000, 20'000));
    REQUIRE(child.load() > 0);
    const auto tree = tree_of(static_cast<pid_t>(child.load()));
    std::size_t scanned = 0;
    bool saw_ssh = false;
    for (pid_t p : tree) {
      const std::string cmd = cmdline_of(p);
      saw_ssh = saw_ssh || cmd.find("ssh") == 0 || cmd.find("/ssh ") != std::string::npos;
      CHECK_MESSAGE(!memory_holds(p, seed, scanned), "the key's seed is in the memory of " << p << ": " << cmd);
      CHECK_MESSAGE(cmd.find(s.key_file + " ") == std::string::npos, "the private key file is named to " << cmd);
      const std::string env = test::read_file("/proc/" + std::to_string(p) + "/environ");
      CHECK_MESSAGE(env.find("SSH_AUTH_SOCK") == std::string::npos, "SSH_AUTH_SOCK reached " << cmd);
    }
    // The files: the scratch area (the child's scratch directory, the
    // agent's directory with id.pub and known_hosts) and every file a
    // process of the delivery has open.
    std::size_t files = 0;
    for (pid_t p : tree) {
      CHECK_MESSAGE(!files_hold(supervisor::scratch_parent_path(), p, seed, files),
                    "a file of the scratch area or open by " << p << " holds the key's seed");
    }
    MESSAGE("scanned " << scanned << " bytes of " << tree.size() << " processes and " << files << " files");
    CHECK(files > 0);
    CHECK(saw_ssh);
    CHECK(scanned > 1'000'000);  // the child's and ssh's mappings, not an empty read
    // The parent holds the seed (the probe finds what it looks for).
    std::size_t own = 0;
    CHECK(memory_holds(::getpid(), seed, own));
    held.release("yes");
    const Outcome o = h.wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::delivered, o.reason);
    CHECK(s.remote_ref(remote) == s.tip);
  }

  TEST_CASE(
      "T5 D1: a deadline while the remote's hook holds an SSH push kills the child and ssh, the stop is confirmed, "
      "no ssh of the delivery is left running, and the remote's ref is unchanged") {
    Setup s;
    const std::string remote = s.bare("late");
    HeldRemote held(s.dir.path(), remote);
    Executor ex(s.executor_options());
    const auto t0 = sys::mono_now_ns();
    const Outcome o = ex.submit(s.request(remote, s.tip, 4'000)).wait();
    const double took_ms = sys::ns_to_ms(sys::mono_now_ns() - t0);
    MESSAGE("deadline 4000 ms; outcome after " << took_ms << " ms");
    REQUIRE_MESSAGE(held.entered(), "the push never reached the hook: " << o.reason);
    CHECK(took_ms < 4'000 + sys::ns_to_ms(kReapBound + kEofBound));
    s.stopped_while_held(o, OutcomeKind::deadline_killed, remote, held);
  }

  TEST_CASE(
      "T5 A4: a revocation while the remote's hook holds an SSH push: revoked, confirmed, no ssh of the delivery "
      "left running, the remote's ref unchanged") {
    Setup s;
    const std::string remote = s.bare("revoked");
    HeldRemote held(s.dir.path(), remote);
    Executor ex(s.executor_options());
    auto h = ex.submit(s.request(remote, s.tip, 60'000));
    REQUIRE(test::wait_for_fact([&] { return held.entered(); }, 30'000, 20'000));
    h.revoke("the buyer withdrew");
    const Outcome o = h.wait();
    s.stopped_while_held(o, OutcomeKind::revoked, remote, held);
  }

  TEST_CASE(
      "T5: an unknown host key ends an SSH delivery transport_failed naming the key's fingerprint, nothing sent") {
    Setup s;
    const std::string remote = s.bare("unknown");
    HeldRemote held(s.dir.path(), remote);
    // Another host's key under this host's name: the server's is unknown.
    const std::string other = s.dir.path() + "/other_host";
    run_ok({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other});
    const std::string other_pub = test::read_file(other + ".pub");
    test::write_file(s.known_hosts, "[127.0.0.1]:" + std::to_string(s.sshd->port()) + " " + other_pub);
    Executor ex(s.executor_options());
    const Outcome o = ex.submit(s.request(remote, s.tip)).wait();
    CHECK_MESSAGE(o.kind == OutcomeKind::transport_failed, outcome_name(o.kind), ": ", o.reason);
    CHECK(o.remote_effect == RemoteEffect::none);
    const std::string fingerprint = run_ok({"/usr/bin/ssh-keygen", "-l", "-f", s.dir.path() + "/sshd/host_key.pub"});
    const std::string sha = fingerprint.substr(fingerprint.find("SHA256:"), 50);
    CHECK_MESSAGE(o.reason.find(sha.substr(0, sha.find(' '))) != std::string::npos, o.reason);
    CHECK_FALSE(held.entered());
    CHECK(s.remote_ref(remote).empty());
    CHECK(s.sshd->log().find("Accepted publickey") == std::string::npos);
  }
  TEST_CASE(
      "A5 T5: push --via an ssh remote: the service signs with its ssh-key credential, scoped to that user and "
      "host, and the ref lands; outside the scope it is refused, nothing sent") {
    Setup s;
    const std::string remote = s.bare("via");
    const std::string scope = "ssh://" + s.sshd->user() + "@127.0.0.1:" + std::to_string(s.sshd->port()) + "/";
    test::ServeProcess service(s.dir.path() + "/state", s.dir.path(),
                               {"--credential", "deploy=ssh-key:" + s.key_file, "--credential-scope",
                                "deploy=" + scope + s.dir.path().substr(1) + "/repos/", "--known-hosts", s.known_hosts,
                                "--lane-dir", s.dir.path() + "/lanes"});
    REQUIRE_MESSAGE(service.up(), service.log());
    const auto via = [&](const std::string& url) {
      return test::run(
          test::clean_env_argv({COURIER_BINARY, "push", "--via", service.socket(), "--credential", "deploy", "--repo",
                                s.source, "--remote", url, "--ref", kMain, "--oid", s.tip, "--json"}));
    };
    const test::RunResult r = via(s.sshd->url(remote));
    CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
    CHECK(r.out.find("\"delivered\"") != std::string::npos);
    CHECK(s.remote_ref(remote) == s.tip);
    // Another user at the same host is outside the credential's scope.
    const std::string other = "ssh://nobody@127.0.0.1:" + std::to_string(s.sshd->port()) + remote;
    const test::RunResult out = via(other);
    CHECK(out.exit_code != 0);
    CHECK_MESSAGE(out.out.find("credential_out_of_scope") != std::string::npos, out.out << out.err);
  }
}

}  // namespace integration_ssh_delivery
