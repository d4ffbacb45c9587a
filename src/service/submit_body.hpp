// submit_body.hpp — the body of POST /v1/deliveries read into a submission:
// the one bounded JSON reader (wire/json.hpp: size, depth, a key twice),
// then every field for its type and spelling, each refusal naming its
// field. The repository and its objects are looked at only through the
// RepositoryChecks given (the service's use the filesystem and libgit2), so
// the reading itself is pure: tested without a repository and fuzzed
// (fuzz/fuzz_api_body.cpp).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "courier/result.hpp"
#include "service/credential_scope.hpp"
#include "service/deliveries.hpp"

namespace courier::service {

// What the API checks requests against (the service's configuration).
struct ApiConfig {
  std::string repo_root;           // canonical; a repo must be under it
  ServiceCredentials credentials;  // name -> spelling (key:FILE, ...) and scope
  bool allow_http_loopback = false;
};

// A refused request: its status, code, field name ("" for none) and message.
struct Refusal {
  int status = 400;
  std::string code;
  std::string field;
  std::string message;
};

// The repository and its objects, as the service finds them.
struct RepositoryChecks {
  // The repository's real path (symlinks resolved) when it exists under the
  // service's root; else the refusal (400 bad_field, 403 repo_outside_root).
  std::function<tl::expected<std::string, Refusal>(const std::string& repo)> locate;
  // Whether `oid` is an object of `repo` a delivery may send (a commit, or
  // an annotated tag of one).
  std::function<Result<void>(const std::string& repo, const std::string& oid)> gated_object;
  // The id a bounded revision of `repo` names.
  std::function<Result<std::string>(const std::string& repo, const std::string& rev)> resolve_revision;
};

// Every refusal of one body, in the order a person would fix them (the
// first is the answer's "error", all of them its "errors").
using Refusals = std::vector<Refusal>;

// The submission a body asks for, or every refusal.
tl::expected<SubmitInput, Refusals> read_submission(std::string_view body, const ApiConfig& config,
                                                    const RepositoryChecks& checks);

}  // namespace courier::service
