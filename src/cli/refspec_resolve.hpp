// refspec_resolve.hpp — a push refspec resolved against the local refs as
// git's match_explicit_refs resolves it (rule X-CLI1): the source is a ref
// matched by git's refname rules (`main` → refs/heads/main when that is the
// only strong match; refs/heads/ and refs/tags/ are strong, refs/remotes/
// weak), else any revision naming an object (an id, HEAD, main~1); the
// destination is the source's own full name when none is given, a full
// name as given, or a short name under the source's namespace
// (refs/heads/ or refs/tags/, git's guess_ref). git first looks for a short
// destination among the remote's refs; this command resolves it before the
// remote is contacted, so a short destination needs a source that is a
// branch or a tag (docs/cli.md). Pure: the refs are a snapshot, the object
// lookup a function.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cli/refspec.hpp"
#include "courier/result.hpp"
#include "repo/local_refs.hpp"

namespace courier::cli {

struct PushTarget {
  std::string src;  // the revision to deliver: a full ref name when the source matched one, else as given
  std::string dst;  // the remote ref, in full
  bool force = false;
};

// Whether a revision names an object (repo::names_object, or a test's table).
using ObjectProbe = std::function<bool(const std::string& rev)>;

// git's refname_match: `full` is what `short_name` abbreviates (as given,
// or under refs/, refs/tags/, refs/heads/, refs/remotes/, or a remote's HEAD).
bool refname_matches(const std::string& short_name, const std::string& full);

// Errors: invalid_argument in git's words ("src refspec main matches more
// than one", "src refspec nosuch does not match any", "main~1 cannot be
// resolved to branch", a destination that is not a full refname).
Result<PushTarget> resolve_refspec(const Refspec& spec, const repo::RefSnapshot& refs, const ObjectProbe& probe);

}  // namespace courier::cli
