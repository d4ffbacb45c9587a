// push.hpp — `git-courier push`: validate everything before any child
// exists, run one delivery through an Executor, report it (human or JSON),
// and turn SIGINT/SIGTERM into a revocation that still waits for the
// confirmed stop.
#pragma once

#include "cli/args.hpp"

namespace courier::cli {

// Returns the process exit code (args.hpp).
int run_push(const PushArgs& args);

}  // namespace courier::cli
