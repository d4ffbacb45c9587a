// push_default.hpp — what `git push` pushes, and where, when the command
// line does not say (rule X-CLI2), read from git's configuration as git
// reads it: the remote (branch.<name>.pushRemote, remote.pushDefault,
// branch.<name>.remote, the only configured remote, origin), and the
// refspec (remote.<name>.push, then push.default: simple, git's default,
// current and upstream with git's checks and words; matching refused, as
// this command delivers one ref; nothing as git says it). Pure: the
// configuration and the refs are read by the caller.
#pragma once

#include <optional>
#include <string>

#include "courier/result.hpp"
#include "repo/git_config.hpp"
#include "repo/local_refs.hpp"

namespace courier::cli {

// The remote `git push` with no <remote> pushes to, as a word for
// resolve_remote(). Errors: invalid_argument ("No configured push
// destination.", as git says it).
Result<std::string> default_push_remote(const repo::GitConfig& config, const repo::RefSnapshot& refs);

// The one refspec `git push <remote>` pushes when none is given. `remote`
// is git's name of the remote: a configured remote's name, or the URL as
// given; `named` says which. Errors: invalid_argument in git's words (no
// upstream, an upstream of another name under simple, another remote under
// upstream, a detached HEAD, push.default nothing or malformed), or a
// refusal naming what git would do (matching; several remote.<name>.push).
Result<std::string> default_push_refspec(const repo::GitConfig& config, const repo::RefSnapshot& refs,
                                         const std::string& remote, bool named);

}  // namespace courier::cli
