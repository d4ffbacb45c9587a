// usage.hpp — the one description of the command line: every command, its
// synopsis and options, the exit codes, the environment and the files. The
// --help text, the man page (git-courier.1) and the bash completion are all
// rendered from it, so none of them can say something the others do not.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace courier::cli {

// One option of one command.
struct OptionDoc {
  const char* name;     // "--repo"
  const char* alias;    // "-q", or nullptr
  const char* arg;      // "DIR", or nullptr for a switch
  const char* text;     // what it does (one paragraph; wrapped when printed)
  const char* choices;  // the values a completion offers ("libgit2 git"), or nullptr
};

// One command (or, for name "", the program itself).
struct CommandDoc {
  const char* name;                   // "push"
  const char* summary;                // one line, for the command list and the man page
  std::vector<const char*> synopsis;  // each line after "git-courier " (a leading space: continued)
  std::vector<OptionDoc> options;
  std::vector<const char*> paragraphs;  // after the options (help and man page)
};

struct ManualDoc {
  const char* tagline;  // the man page's NAME line
  std::vector<const char*> description;
  CommandDoc program;  // the top-level synopsis and options (--help, --version)
  std::vector<CommandDoc> commands;
  std::vector<std::pair<const char*, const char*>> exit_codes;   // "0", "delivered or up_to_date"
  std::vector<std::pair<const char*, const char*>> environment;  // "SSL_CERT_FILE", ...
  std::vector<std::pair<const char*, const char*>> files;
};

// The table itself.
const ManualDoc& manual();

// The command of that name, or nullptr.
const CommandDoc* find_command(std::string_view name);

// `git-courier --help`: the synopsis, the commands, the top-level options.
std::string help_text();
// `git-courier COMMAND --help`, for a command find_command() knows.
std::string command_help(const CommandDoc& command);
// The man page git-courier.1, in roff (man(7) macros). `version` goes into
// its header.
std::string man_page(std::string_view version);
// A bash completion script for `git-courier` and for `git courier` (the
// function `_git_courier` that git's own completion calls).
std::string bash_completion();

}  // namespace courier::cli
