// twins.hpp — one comparison with git: the same repository cloned twice
// (`ours` pushed by git-courier, `theirs` by git), each with an origin of
// its own on the nginx git server, trusted through http.sslCAInfo as a user
// would configure it. The CLI suites that hold git-courier's push to
// `git push` share it.
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/args.hpp"
#include "fixture_server.hpp"
#include "nginx_server.hpp"
#include "support.hpp"

namespace courier::test {

struct Twins {
  NginxServer& nginx;
  TempDir dir;
  std::string ours;
  std::string theirs;
  std::string ours_remote;
  std::string theirs_remote;

  Twins(NginxServer& n, const std::string& base, const std::string& name) : nginx(n) {
    ours = dir.path() + "/ours";
    theirs = dir.path() + "/theirs";
    ours_remote = name + "-ours";
    theirs_remote = name + "-theirs";
    for (const auto& [clone, remote] : {std::pair{ours, ours_remote}, {theirs, theirs_remote}}) {
      std::filesystem::copy(base, clone, std::filesystem::copy_options::recursive);
      nginx.create_bare_repo(remote);
      git_ok({"remote", "add", "origin", nginx.url(remote)}, clone);
      git_ok({"config", "http.sslCAInfo", nginx.ca_file()}, clone);
      std::filesystem::create_directories(clone + "/sub/dir");
    }
  }

  // The same git command in both clones (configuration, commits, resets).
  void both(const std::vector<std::string>& args) const {
    git_ok(args, ours);
    git_ok(args, theirs);
  }

  // The same configuration in both remotes (receive.*).
  void remotes_config(const std::string& key, const std::string& value) const {
    for (const auto& r : {ours_remote, theirs_remote}) git_ok({"--git-dir", nginx.repo_path(r), "config", key, value});
  }

  // The same hook in both remotes.
  void hook(const std::string& name, const std::string& body) const {
    for (const auto& r : {ours_remote, theirs_remote}) {
      const std::string path = nginx.repo_path(r) + "/hooks/" + name;
      std::ofstream(path) << "#!/bin/sh\n" << body;
      ::chmod(path.c_str(), 0755);
    }
  }

  // `git-courier push ARGS` with its working directory at `ours`/`cwd`.
  RunResult courier(const std::vector<std::string>& args, const std::string& cwd = "") const {
    std::vector<std::string> argv = {"/bin/sh",     "-c",         "cd \"$1\" && shift && exec \"$@\"",
                                     "sh",          ours + cwd,   COURIER_BINARY,
                                     "push",        "--lane-dir", dir.path() + "/lanes",
                                     "--no-journal"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, {}, Stdin::bytes, git_env());
  }

  GitResult git_push(const std::vector<std::string>& args, const std::string& cwd = "") const {
    std::vector<std::string> a = {"push"};
    a.insert(a.end(), args.begin(), args.end());
    return git(a, theirs + cwd);
  }

  // Every ref of a remote, as `git for-each-ref` prints it.
  std::string refs_of(const std::string& remote) const {
    return git_ok({"--git-dir", nginx.repo_path(remote), "for-each-ref", "--format=%(objectname) %(refname)"});
  }

  // Runs OURS_ARGS with git-courier and GIT_ARGS with git, and checks that
  // both pushed or both refused (git's 1 for a refused ref is
  // kExitRejected), and that both remotes hold the same refs afterwards.
  std::pair<RunResult, GitResult> compare(const std::vector<std::string>& ours_args,
                                          const std::vector<std::string>& git_args, const std::string& cwd = "") const {
    auto c = courier(ours_args, cwd);
    auto g = git_push(git_args, cwd);
    INFO("git-courier push: exit " << c.exit_code << "\n" << c.err);
    INFO("git push: exit " << g.exit_code << "\n" << g.err);
    CHECK((c.exit_code == cli::kExitOk) == g.ok());
    CHECK(refs_of(ours_remote) == refs_of(theirs_remote));
    return {c, g};
  }

  // The same ARGS both ways.
  std::pair<RunResult, GitResult> same(const std::vector<std::string>& args, const std::string& cwd = "") const {
    return compare(args, args, cwd);
  }
};

}  // namespace courier::test
