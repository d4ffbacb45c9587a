// outcome_json.hpp — an outcome as JSON: the one document `git-courier push
// --json` prints and the service's API returns as "outcome", so that a push
// through the service (--via) prints what a local push prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "courier/outcome.hpp"

namespace courier::service {

// What the outcome itself does not carry: what was delivered where.
struct OutcomeFacts {
  std::string remote;  // canonical (no user information)
  std::string ref;
  std::string oid;
  std::string hint;  // what to try next, for people (empty: null)
};

nlohmann::json outcome_json(const Outcome& o, const OutcomeFacts& facts);

}  // namespace courier::service
