// cli-usage.cpp — the help text, the man page, the bash completion and
// the version, all from the shipped binary: the page and the completion say
// what the usage table says, and man renders the page without a warning.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/usage.hpp"
#include "service/service_options.hpp"
#include "fixture_server.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli_usage {

using namespace courier;
using namespace courier::cli;

namespace {

// The words the binary's completion offers for `words` (the word at `cword`
// being completed), through `function` (_git_courier_main for
// `git-courier`, _git_courier as git's completion calls it).
std::string complete(const std::string& script, const std::string& function, const std::string& words, int cword) {
  const std::string program =
      "source " + script + "\n" +
      (function == "_git_courier" ? "words=(" + words + "); cword=" + std::to_string(cword) + "; __git_cmd_idx=1\n"
                                  : "COMP_WORDS=(" + words + "); COMP_CWORD=" + std::to_string(cword) + "\n") +
      function + "\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n";
  auto r = test::run({"/bin/bash", "--norc", "--noprofile", "-c", program});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return "\n" + r.out;
}

bool has_line(const std::string& lines, const std::string& word) {
  return lines.find("\n" + word + "\n") != std::string::npos;
}

}  // namespace

TEST_SUITE("cli") {
  TEST_CASE("the man page lists every command and option --help lists, and man renders it without a warning") {
    test::TempDir dir;
    auto page = test::run({COURIER_BINARY, "__man"});
    REQUIRE(page.exit_code == 0);
    // The page the build wrote (and `cmake --install` installs) is this one.
    const std::string built = std::filesystem::path(COURIER_BINARY).parent_path() / "git-courier.1";
    CHECK_MESSAGE(test::read_file(built) == page.out, (built + " differs from `git-courier __man`"));
    const std::string file = dir.path() + "/git-courier.1";
    test::write_file(file, page.out);
    auto shown = test::run({"/usr/bin/man", "--warnings", "-l", file}, {}, test::Stdin::bytes,
                           {"PATH=/usr/bin:/bin", "MANWIDTH=80", "LC_ALL=C.UTF-8"});
    REQUIRE_MESSAGE(shown.exit_code == 0, shown.err);
    CHECK_MESSAGE(shown.err.empty(), shown.err);
    CHECK(shown.out.find("- deliver one git object to one ref") != std::string::npos);  // NAME
    for (const char* section : {"SYNOPSIS", "EXIT STATUS", "ENVIRONMENT", "FILES"}) {
      CHECK_MESSAGE(shown.out.find(section) != std::string::npos, std::string(section));
    }
    const auto& commands = manual().commands;
    for (std::size_t i = 0; i < commands.size(); ++i) {
      const CommandDoc& c = commands[i];
      auto help = test::run({COURIER_BINARY, c.name, "--help"});
      CHECK_MESSAGE(help.exit_code == 0, std::string(c.name));
      // The command's section, up to the next one: each option is in its own command's section.
      const auto at = shown.out.find("\n   " + std::string(c.name) + "\n");
      REQUIRE_MESSAGE(at != std::string::npos, std::string(c.name));
      const auto end = i + 1 < commands.size() ? shown.out.find("\n   " + std::string(commands[i + 1].name) + "\n", at)
                                               : shown.out.find("\nEXIT STATUS", at);
      REQUIRE_MESSAGE(end != std::string::npos, std::string(c.name));
      const std::string section = shown.out.substr(at, end - at);
      for (const auto& o : c.options) {
        // The option's own entry (not a mention in the synopsis or another's text):
        // "--quiet, -q" or "--repo DIR" at the start of a line.
        const std::string spelled = std::string(o.name) + (o.alias ? std::string(", ") + o.alias : std::string()) +
                                    (o.arg ? std::string(" ") + o.arg : std::string());
        const std::string command = c.name;
        CAPTURE(command);
        CAPTURE(spelled);
        // (--help puts a long entry's text on the next line)
        CHECK((help.out.find("\n  " + spelled + " ") != std::string::npos ||
               help.out.find("\n  " + spelled + "\n") != std::string::npos));
        // (man puts a short entry's text on the same line, after a space)
        CHECK((section.find("\n       " + spelled + "\n") != std::string::npos ||
               section.find("\n       " + spelled + " ") != std::string::npos));
      }
    }
    for (const auto& [code, meaning] : manual().exit_codes) {
      CHECK_MESSAGE(shown.out.find(meaning) != std::string::npos, std::string(code));
    }
  }

  TEST_CASE("the bash completion offers the commands, every push option and the values it knows") {
    test::TempDir dir;
    auto script = test::run({COURIER_BINARY, "__completion", "bash"});
    REQUIRE(script.exit_code == 0);
    const std::string built = std::filesystem::path(COURIER_BINARY).parent_path() / "git-courier.bash";
    CHECK_MESSAGE(test::read_file(built) == script.out, (built + " differs from `git-courier __completion bash`"));
    const std::string file = dir.path() + "/git-courier";
    test::write_file(file, script.out);
    const std::string commands = complete(file, "_git_courier_main", "git-courier ''", 1);
    for (const auto& c : manual().commands) CHECK_MESSAGE(has_line(commands, c.name), std::string(c.name));
    CHECK(complete(file, "_git_courier_main", "git-courier pu", 1) == "\npush\n");
    const CommandDoc* push = find_command("push");
    REQUIRE(push != nullptr);
    const std::string options = complete(file, "_git_courier_main", "git-courier push --", 2);
    const std::string via_git = complete(file, "_git_courier", "git courier push --", 3);
    for (const auto& o : push->options) {
      CHECK_MESSAGE(has_line(options, o.name), std::string(o.name));
      CHECK_MESSAGE(has_line(via_git, o.name), std::string(o.name));
    }
    CHECK_FALSE(has_line(options, "--limit"));  // log's, not push's
    CHECK(complete(file, "_git_courier_main", "git-courier push --pack-engine ''", 3) == "\nauto\nlibgit2\ngit\n");
    CHECK(complete(file, "_git_courier", "git courier push --auth b", 4) == "\nbearer:\n");
    CHECK(complete(file, "_git_courier", "git courier push --auth ss", 4) == "\nssh-key:\n");
  }

  TEST_CASE("X-CLI3: the completion offers the repository's remotes and refs for push's words, never file names") {
    test::TempDir dir;
    auto script = test::run({COURIER_BINARY, "__completion", "bash"});
    REQUIRE(script.exit_code == 0);
    const std::string file = dir.path() + "/git-courier";
    test::write_file(file, script.out);
    const std::string repo = dir.path() + "/repo";
    test::make_source_repo(repo, 2);
    test::git_ok({"remote", "add", "origin", "https://example.invalid/o.git"}, repo);
    test::git_ok({"remote", "add", "upstream", "https://example.invalid/u.git"}, repo);
    test::git_ok({"tag", "v1"}, repo);
    test::git_ok({"branch", "topic"}, repo);
    const std::string c = " -C " + repo + " ";
    // <remote>, and --remote: the remotes, found from -C or --repo.
    CHECK(complete(file, "_git_courier_main", "git-courier" + c + "push ''", 4) == "\norigin\nupstream\n");
    CHECK(complete(file, "_git_courier_main", "git-courier push --repo " + repo + " --remote ''", 5) ==
          "\norigin\nupstream\n");
    CHECK(complete(file, "_git_courier", "git courier push --repo " + repo + " --no-journal u", 6) == "\nupstream\n");
    // <refspec>, --rev and --ref: branches and tags ('+' kept), HEAD.
    const std::string refs = complete(file, "_git_courier_main", "git-courier" + c + "push origin ''", 5);
    for (const char* ref : {"HEAD", "main", "topic", "v1"}) CHECK_MESSAGE(has_line(refs, ref), refs);
    CHECK(complete(file, "_git_courier_main", "git-courier" + c + "push origin +to", 5) == "\n+topic\n");
    CHECK(complete(file, "_git_courier_main", "git-courier push --repo " + repo + " --rev v", 5) == "\nv1\n");
    CHECK(complete(file, "_git_courier_main", "git-courier push --repo=" + repo + " --ref ma", 4) == "\nmain\n");
    // Every later refspec word is a ref too (several refspecs, X-CLI6), and
    // no file names where a remote or a ref goes.
    CHECK(complete(file, "_git_courier_main", "git-courier" + c + "push origin main ''", 6) == refs);
    CHECK(complete(file, "_git_courier_main", "git-courier" + c + "push gi", 4) == "\n\n");
  }

  TEST_CASE("the parser knows every option the table documents") {
    for (const auto& c : manual().commands) {
      for (const auto& o : c.options) {
        for (const char* spelling : {o.name, o.alias}) {
          if (spelling == nullptr) continue;
          std::vector<std::string> args = {spelling};
          if (o.arg)
            args.push_back(o.choices ? std::string(o.choices).substr(0, std::string(o.choices).find(' ')) : "1");
          const std::string command = c.name;
          std::string error;
          if (command == "push") {
            auto r = parse_push_args(args);
            if (!r) error = r.error().message;
          } else if (command == "serve") {
            auto r = service::parse_service_options(args);
            if (!r) error = r.error().message;
          } else if (command == "keygen") {
            auto r = parse_keygen_args(args);
            if (!r) error = r.error().message;
          } else {
            auto r = parse_journal_args(command, args);
            if (!r) error = r.error().message;
          }
          CAPTURE(command);
          const std::string option = spelling;
          CAPTURE(option);
          CHECK_MESSAGE(error.find("unknown option") == std::string::npos, error);
          CHECK_MESSAGE(error.find("unexpected argument") == std::string::npos, error);
        }
      }
    }
  }

  TEST_CASE("--version, -V, version and push --version print the version and exit 0") {
    for (std::vector<std::string> argv : {std::vector<std::string>{COURIER_BINARY, "--version"},
                                          {COURIER_BINARY, "-V"},
                                          {COURIER_BINARY, "version"},
                                          {COURIER_BINARY, "push", "--version"}}) {
      CAPTURE(argv.back());
      auto r = test::run(argv);
      CHECK(r.exit_code == 0);
      CHECK(r.out.rfind("git-courier " COURIER_VERSION "\n", 0) == 0);
      CHECK(r.out.find("libgit2 ") != std::string::npos);
      CHECK(r.out.find("libcurl ") != std::string::npos);
    }
  }

  TEST_CASE("help COMMAND prints that command's help; the hidden generators refuse stray arguments") {
    auto push = test::run({COURIER_BINARY, "help", "push"});
    CHECK(push.exit_code == 0);
    CHECK(push.out.rfind("usage: git-courier push [options] [--atomic | --no-atomic] [-o OPTION]... "
                         "[<remote> [[+]<src>[:<dst>] | :<dst>]...]",
                         0) == 0);
    auto unknown = test::run({COURIER_BINARY, "help", "frobnicate"});
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.err.find("no help for 'frobnicate': not a command") != std::string::npos);
    auto bad = test::run({COURIER_BINARY, "__completion", "zsh"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("unknown command '__completion'") != std::string::npos);
  }
}

}  // namespace integration_cli_usage
