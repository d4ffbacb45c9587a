// ssh-remote-git.cpp — the SSH remotes git-courier reads, compared with
// what git itself hands to ssh for the same spelling: `git push` runs with
// GIT_SSH_COMMAND naming a script that writes its arguments to a file
// (and fails, so nothing is sent anywhere), and the user, host, port and
// the quoted git-receive-pack command it saw are compared with
// wire::parse_remote's reading (H2).
#include <doctest/doctest.h>

#include <arpa/inet.h>

#include <cctype>
#include <string>
#include <vector>

#include "support.hpp"
#include "wire/remote.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_ssh_remote_git {

using namespace courier;
using courier::test::run;
using courier::test::TempDir;

namespace {

// What git asked ssh for: [user@]host, port, the remote command.
struct SshCall {
  std::string user;
  std::string host;
  int port = 22;
  std::string command;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = text.find('\n', at);
    out.push_back(text.substr(at, end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

class GitSsh {
 public:
  GitSsh() {
    test::write_file(dir_.path() + "/ssh",
                     "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$CAPTURE\"\nexit 1\n");
    REQUIRE(run({"/bin/chmod", "+x", dir_.path() + "/ssh"}).exit_code == 0);
    REQUIRE(git({"init", "-q", repo()}).exit_code == 0);
    REQUIRE(git({"-C", repo(), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"})
                .exit_code == 0);
  }

  // What git hands to ssh when pushing to `remote`.
  SshCall call(const std::string& remote) {
    const std::string capture = dir_.path() + "/argv";
    test::write_file(capture, "");
    git({"-C", repo(), "-c", "ssh.variant=ssh", "-c", "protocol.version=0", "push", "-q", remote, "HEAD:refs/heads/x"});
    auto args = lines_of(test::read_file(capture));
    REQUIRE_MESSAGE(args.size() >= 2, remote);
    SshCall c;
    c.command = args.back();
    const std::string user_host = args[args.size() - 2];
    const auto at = user_host.rfind('@');
    c.host = at == std::string::npos ? user_host : user_host.substr(at + 1);
    if (at != std::string::npos) c.user = user_host.substr(0, at);
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "-p") c.port = std::stoi(args[i + 1]);
    }
    return c;
  }

 private:
  std::string repo() const { return dir_.path() + "/r"; }
  test::RunResult git(std::vector<std::string> args) {
    args.insert(args.begin(), "/usr/bin/git");
    return run(args, {}, test::Stdin::bytes,
               {"PATH=/usr/bin:/bin", "HOME=" + dir_.path(), "GIT_CONFIG_NOSYSTEM=1",
                "GIT_SSH_COMMAND=" + dir_.path() + "/ssh", "CAPTURE=" + dir_.path() + "/argv"});
  }

  TempDir dir_;
};

std::string bare_host(const std::string& host) {
  return host.size() > 1 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
}

// One host in one spelling: git hands ssh the host as written, git-courier
// its canonical form (lower case; an IPv6 address in RFC 5952 form).
std::string host_key(const std::string& host) {
  in6_addr a{};
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_pton(AF_INET6, host.c_str(), &a) == 1 && inet_ntop(AF_INET6, &a, text, sizeof text)) return text;
  std::string out = host;
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

TEST_SUITE("ssh-remote-git") {
  TEST_CASE("H2: for every ssh spelling, git and git-courier reach the same user, host, port and repository path") {
    GitSsh git;
    for (const std::string spelling : {"git@example.com:owner/repo.git", "example.com:/abs/x", "example.com:~bob/x",
                                       "ssh://git@example.com:2222/~/x", "git+ssh://u@h/a'b!c",
                                       "ssh+git://u@H:22/srv/r.git", "u@[::1]:x", "ssh://[0::1]:2200/x", "h:it's here",
                                       "ssh://h/a%20b", "h:a%20b", "h:semi;colon $(x) `y`/r", "ssh://h/~/q'uo!te"}) {
      CAPTURE(spelling);
      auto ours = wire::parse_remote(spelling);
      REQUIRE_MESSAGE(ours, ours.error().message);
      const std::string command = "git-receive-pack " + wire::shell_quote(wire::ssh_receive_pack_path(*ours));
      const SshCall theirs = git.call(spelling);
      CHECK(theirs.user == ours->user.value_or(""));
      CHECK(host_key(theirs.host) == bare_host(ours->url.host));
      CHECK(theirs.port == ours->url.port);
      // A home-relative path goes relative ('x'), as git sends the
      // scp-like spelling; git sends ssh://h/~/x as '~/x', which the server
      // reads as the same repository (the command runs in the home).
      const auto as_git = [](const std::string& git_command) {
        const std::string home = "git-receive-pack '~/";
        return git_command.rfind(home, 0) == 0 ? "git-receive-pack '" + git_command.substr(home.size()) : git_command;
      };
      CHECK(command == as_git(theirs.command));
      // The canonical remote, given to git, reaches the same repository.
      const SshCall canonical = git.call(ours->canonical);
      CHECK(as_git(canonical.command) == command);
      CHECK(canonical.user == theirs.user);
      CHECK(canonical.host == host_key(theirs.host));
      CHECK(canonical.port == theirs.port);
    }
  }
}

}  // namespace integration_ssh_remote_git
