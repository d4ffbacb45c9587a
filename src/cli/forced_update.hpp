// forced_update.hpp — whether a delivered --force push moved the remote's
// ref to a commit that does not descend from its old one: git push says
// "(forced update)" then (`+ old...new main -> main (forced update)`), and
// so does the human line (X-OUT1).
#pragma once

#include <string>

#include "courier/outcome.hpp"
#include "courier/update_mode.hpp"

namespace courier::cli {

// True for a delivered push under UpdateMode::force whose old id (as the
// remote advertised it) git would not have moved to `oid` without force
// (not an ancestor, absent here, a tag). Reads the repository after the
// delivery, as git push does; a repository that cannot be read says false.
bool forced_update(const std::string& repo, UpdateMode mode, const std::string& ref, const std::string& oid,
                   const Outcome& o);

}  // namespace courier::cli
