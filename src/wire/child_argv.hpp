// child_argv.hpp — the child's command line and exit codes: the only place
// the word that turns this executable into a delivery child is spelled.
//
// The parent re-execs a program with argv exactly [program, kChildWord];
// that program's main() calls courier::run_child_if_requested first, which
// recognises the word and runs the child. Parent and child both ask this
// header; nobody else writes the word.
#pragma once

#include <string_view>

namespace courier::wire {

inline constexpr std::string_view kChildWord = "__delivery-push";

// Exit codes of the child, distinct so the supervisor's log can tell them apart.
inline constexpr int kChildDone = 0;              // result sent: delivered / up to date
inline constexpr int kChildPushFailed = 10;       // result sent: rejected or failed
inline constexpr int kChildProtocolFailure = 11;  // pipe or frame failure talking to the parent
inline constexpr int kChildMisuse = 12;           // run by hand, or no valid job (C2)
inline constexpr int kChildOrphaned = 13;         // the parent named in the job is not our parent

// True when argv asks for the child.
inline bool is_child_argv(int argc, char** argv) { return argc >= 2 && argv[1] != nullptr && kChildWord == argv[1]; }

}  // namespace courier::wire
