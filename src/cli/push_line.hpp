// push_line.hpp — `git courier push [<remote> [<refspec>]]` read as git
// reads `git push` (rules X-CLI1, X-CLI2): the repository found from the
// working directory (or --repo DIR, read as `git -C DIR`), the remote (the
// word, --remote, or git's default), the refspec (the word, --rev/--oid
// with --ref, remote.<name>.push or push.default) resolved against the
// local refs, `+` as a force. The result is the long options' form
// (--repo, --remote, --ref in full, --rev, --force), which
// read_push_request() then judges like any other command line: a local
// push and `push --via` read the line the same way.
#pragma once

#include "cli/args.hpp"
#include "courier/result.hpp"

namespace courier::cli {

// Errors: invalid_argument, in git's words where git has them.
Result<PushArgs> settle_push_line(PushArgs args);

}  // namespace courier::cli
