// via_client.hpp — `git-courier push --via SOCKET`: the CLI as a client of
// the service (`git-courier serve`, docs/service.md). It submits the
// delivery over the service's Unix socket, follows its events and prints
// them as a local push would (meters, `remote:` lines, the outcome's line
// or --json document, the same exit codes: cli/push.hpp's renderers, fed
// with the outcome document read back by report/outcome_json.hpp). Ctrl-C
// revokes through the service (DELETE) and still waits for the outcome.
#pragma once

#include "cli/args.hpp"

namespace courier::cli {

// Returns the process exit code: the outcome's (args.hpp), or kExitUsage
// for a request the service refuses (a 4xx: a bad field, an unknown
// credential, a repository outside its root, a caller it does not allow,
// an id already used for another delivery), or kExitFailed for a service
// that cannot be reached, is draining (503) or full (429), or was lost
// before the outcome came.
int run_push_via(const PushArgs& args);

}  // namespace courier::cli
