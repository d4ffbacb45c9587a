// commands.hpp — the `git-courier` command line: dispatch and each command.
#pragma once

namespace courier::cli {

// Runs the command line (not the child: main() handles that first).
// Returns the process exit code (see args.hpp).
int run(int argc, char** argv);

}  // namespace courier::cli
