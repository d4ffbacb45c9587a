// delivery_push.hpp — the `__delivery-push` child entrypoint.
//
// The parent re-execs its own binary with argv exactly
// [exe, "__delivery-push"]; this is what runs then. It says hello, reads one
// job frame and does that job, answering only through its stdout frames.
// Run by hand (stdin a TTY, or no valid job) it refuses, with a message on
// stderr and kChildMisuse (rule C2): it never pushes without a job.
#pragma once

namespace courier::child {

inline constexpr const char* kSubcommand = "__delivery-push";

// Exit codes of the child, distinct so the supervisor's log can tell them apart.
inline constexpr int kChildDone = 0;             // result sent: delivered / up to date
inline constexpr int kChildPushFailed = 10;      // result sent: rejected or failed
inline constexpr int kChildProtocolFailure = 11; // pipe or frame failure talking to the parent
inline constexpr int kChildMisuse = 12;          // run by hand, or no valid job (C2)
inline constexpr int kChildOrphaned = 13;        // the parent named in the job is not our parent

// Runs the child. Returns its exit code.
int run_delivery_push(int argc, char** argv);

}  // namespace courier::child
