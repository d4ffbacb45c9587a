// forced_update.cpp — "forced update", as git push says it (see the header).
#include "cli/forced_update.hpp"

#include "repo/update_rule.hpp"

namespace courier::cli {

bool forced_update(const std::string& repo, UpdateMode mode, const std::string& ref, const std::string& oid,
                   const Outcome& o) {
  if (mode != UpdateMode::force || o.kind != OutcomeKind::delivered || o.replayed || !o.old_oid) return false;
  if (*o.old_oid == std::string(40, '0')) return false;  // a new ref is created, never forced
  auto refusal = repo::fast_forward_refusal(repo, ref, *o.old_oid, oid);
  return refusal && refusal->has_value();
}

}  // namespace courier::cli
