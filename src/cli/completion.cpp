// completion.cpp — the bash completion script, rendered from the usage table
// (`git-courier __completion bash`) so that it offers exactly the commands
// and options --help lists; for push's <remote> and <refspec> words and for
// --remote, --ref and --rev it offers the remotes, branches and tags of the
// repository the command line names, read with git (never file names). It completes `git-courier ...` and, through the
// `_git_courier` function git's own completion looks for, `git courier ...`.
#include <set>
#include <string>

#include "cli/usage.hpp"

namespace courier::cli {

namespace {

// `case` arms: each command's options, and what each option's value is.
std::string option_cases() {
  std::string options = "  case \"$1\" in\n";
  for (const auto& c : manual().commands) {
    options += "    " + std::string(c.name) + ") echo \"";
    for (std::size_t i = 0; i < c.options.size(); ++i) {
      options += (i ? " " : "") + std::string(c.options[i].name);
      if (c.options[i].alias) options += std::string(" ") + c.options[i].alias;
    }
    options += " --help\" ;;\n";
  }
  return options + "  esac\n";
}

std::string value_cases() {
  std::string values = "  case \"$1\" in\n";
  std::set<std::string> seen;
  for (const auto& c : manual().commands) {
    for (const auto& o : c.options) {
      if (!o.arg || !seen.insert(o.name).second) continue;
      const std::string arg = o.arg;
      std::string kind = "none";
      if (o.choices) {
        kind = std::string("words ") + o.choices;
      } else if (arg == "DIR") {
        kind = "dirs";
      } else if (arg == "FILE") {
        kind = "files";
      } else if (arg.find("NAME") != std::string::npos && c.name == std::string_view("push")) {
        kind = "remotes";  // --remote URL|NAME: the repository's remotes
      } else if (arg == "REF" || arg == "REV") {
        kind = "refs";  // its branches and tags
      }
      values += "    " + std::string(o.name) + ") echo \"" + kind + "\" ;;\n";
    }
  }
  return values + "    *) echo flag ;;\n  esac\n";
}

constexpr const char* kCore = R"bash(
# __git_courier_git_args WORDS...: into __gc_git, the `-C DIR` git needs to
# read the repository the command line names: each -C DIR before the
# command (as git takes it), then --repo DIR after it.
__git_courier_git_args() {
  local -a w=("$@")
  local i
  __gc_git=()
  for ((i = 0; i < ${#w[@]} - 1; i++)); do
    case "${w[i]}" in
      -C | --repo) __gc_git+=(-C "${w[i + 1]}") ;;
      --repo=*) __gc_git+=(-C "${w[i]#--repo=}") ;;
    esac
  done
}

# __git_courier_words KIND CUR: COMPREPLY from git's configuration and refs
# of that repository: remotes, or branches and tags (a leading '+' kept).
__git_courier_words() {
  local kind=$1 cur=$2 force=
  case "$kind" in
    remotes) COMPREPLY=($(compgen -W "$(git "${__gc_git[@]}" remote 2>/dev/null)" -- "$cur")) ;;
    refs)
      [[ $cur == +* ]] && force=+ && cur=${cur#+}
      COMPREPLY=($(compgen -P "$force" -W "HEAD $(git "${__gc_git[@]}" for-each-ref \
        --format='%(refname:short)' refs/heads refs/tags 2>/dev/null)" -- "$cur"))
      ;;
  esac
}

# __git_courier_no_files: an empty answer stays empty (no file names
# offered by readline's default), when bash is completing.
__git_courier_no_files() {
  compopt +o default +o bashdefault 2>/dev/null
  return 0
}

# __git_courier_positional FIRST CWORD WORDS...: how many of push's
# <remote> <refspec> words come before the word at CWORD (an option's
# separate value is not one).
__git_courier_positional() {
  local first=$1 cword=$2
  shift 2
  local -a w=("$@")
  local i n=0
  for ((i = first; i < cword; i++)); do
    case "${w[i]}" in
      --*=*) ;;
      -*) [[ $(__git_courier_value "${w[i]}") != flag ]] && ((i++)) ;;
      *) ((n++)) ;;
    esac
  done
  echo "$n"
}

# __git_courier_reply BASE CWORD WORDS...: fills COMPREPLY for the word at
# CWORD, where WORDS[BASE] is the program (git-courier, or git's `courier`).
__git_courier_reply() {
  local base=$1 cword=$2
  shift 2
  local -a w=("$@")
  local cur=${w[cword]} prev=
  ((cword > 0)) && prev=${w[cword - 1]}
  COMPREPLY=()
  local at=$((base + 1))
  while [[ ${w[at]} == -C ]] && ((at + 1 < cword)); do at=$((at + 2)); done
  if [[ $prev == -C ]] && ((cword <= at)); then
    COMPREPLY=($(compgen -d -- "$cur"))
    return
  fi
  if ((cword == at)); then
    COMPREPLY=($(compgen -W "$(__git_courier_commands) --help -h --version -V" -- "$cur"))
    return
  fi
  local cmd=${w[at]}
  __git_courier_git_args "${w[@]:0:cword}"
  if ((cword > at + 1)); then
    local kind
    kind=$(__git_courier_value "$prev")
    case "$kind" in
      dirs) COMPREPLY=($(compgen -d -- "$cur")); return ;;
      files) COMPREPLY=($(compgen -f -- "$cur")); return ;;
      remotes | refs) __git_courier_no_files; __git_courier_words "$kind" "$cur"; return ;;
      words\ *) COMPREPLY=($(compgen -W "${kind#words }" -- "$cur")); return ;;
      none) __git_courier_no_files; return ;;
    esac
  fi
  if [[ $cmd == help ]]; then
    COMPREPLY=($(compgen -W "$(__git_courier_commands)" -- "$cur"))
    return
  fi
  if [[ $cmd == push && $cur != -* ]]; then
    __git_courier_no_files
    case $(__git_courier_positional $((at + 1)) "$cword" "${w[@]}") in
      0) __git_courier_words remotes "$cur" ;;
      *) __git_courier_words refs "$cur" ;;
    esac
    return
  fi
  COMPREPLY=($(compgen -W "$(__git_courier_options "$cmd")" -- "$cur"))
}

_git_courier_main() {
  __git_courier_reply 0 "$COMP_CWORD" "${COMP_WORDS[@]}"
}

# Called by git's completion for `git courier ...` (it loads this file for
# the command `courier`); words, cword and __git_cmd_idx are git's.
_git_courier() {
  __git_courier_reply "${__git_cmd_idx:-1}" "$cword" "${words[@]}"
}

complete -o bashdefault -o default -F _git_courier_main git-courier
)bash";

}  // namespace

std::string bash_completion() {
  std::string out = "# bash completion for git-courier: generated by `git-courier __completion bash`\n";
  out += "# from src/cli/usage.cpp; do not edit.\n\n";
  out += "__git_courier_commands() {\n  echo \"";
  for (std::size_t i = 0; i < manual().commands.size(); ++i)
    out += (i ? " " : "") + std::string(manual().commands[i].name);
  out += "\"\n}\n\n__git_courier_options() {\n" + option_cases() + "}\n\n";
  out += "__git_courier_value() {\n" + value_cases() + "}\n";
  return out + kCore;
}

}  // namespace courier::cli
