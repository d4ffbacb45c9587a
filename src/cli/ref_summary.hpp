// ref_summary.hpp — the refs of a delivery of several (or of a deletion)
// told one line each, as git push's summary tells them (X-CLI7):
//
//   To https://host/repo.git
//    * [new branch]      main -> main
//    - [deleted]         topic
//    ! [rejected]        old -> old (non-fast-forward)
//    ! [remote rejected] v1 -> v1 (pre-receive hook declined)
//    ! [rejected]        next -> next (atomic push failed)
//
// Pure: the outcome's refs (Outcome::refs) and what was asked for them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "courier/outcome.hpp"
#include "courier/update_mode.hpp"

namespace courier::cli {

// What one ref of the push was asked to do: its source as the user named
// it (empty: a deletion) and its remote ref.
struct AskedRef {
  std::string src;
  std::string ref;
  UpdateMode update = UpdateMode::fast_forward;
};

// Whether a ref moved to a commit git would not have moved it to without
// force (forced_update, per ref); the summary marks it "+ ... (forced
// update)".
using ForcedProbe = std::function<bool(const AskedRef&, const RefOutcome&)>;

// The lines (no trailing newline each): "To <remote>", one per ref of
// `refs` in order. A ref the outcome does not name is not told.
std::vector<std::string> ref_summary(const std::string& remote, const std::vector<AskedRef>& asked,
                                     const std::vector<RefOutcome>& refs, const ForcedProbe& forced);

// A ref's short name as git prints it: refs/heads/ and refs/tags/ taken
// off, refs/remotes/ too; other refs in full.
std::string short_ref(const std::string& ref);

// True when a ref of the outcome was refused (ng or rejected): git then
// ends with "error: failed to push some refs to '<remote>'".
bool any_ref_refused(const std::vector<RefOutcome>& refs);

}  // namespace courier::cli
