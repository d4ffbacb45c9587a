// push_request.hpp — the delivery a `push` command line asks for, read and
// judged in one place for a local push and for `push --via`: --repo and
// git's configuration, --remote as git reads it, the object (--oid, or
// --rev looked up), the update mode (--force, --expect-old,
// --force-with-lease), then the library's validate() for every field of the
// request, each refusal a FieldError (all of them, not the first). A local
// push also settles trust, proxy, the pack engine's git and the lane
// directory here; with --via those are the service's.
#pragma once

#include <optional>
#include <string>

#include "cli/args.hpp"
#include "cli/http_settings.hpp"
#include "cli/remote_name.hpp"
#include "courier/courier.hpp"
#include "repo/git_config.hpp"

namespace courier::cli {

// Where the request goes: run here, or submitted to the service (--via),
// which judges what depends on its own configuration (the repository's
// place under its root, the object, plain http to loopback, credentials).
enum class PushSide { local, via };

struct PushRequest {
  // The delivery as the checked arguments describe it (budget, credentials
  // and observer are added by the caller); its remote read once. With --via
  // and --rev, its oid is empty: the service looks the revision up.
  CheckedRequest checked;
  ResolvedRemote resolved;  // --remote as git reads it: its name, if any, and its URL
  std::string git_program;  // local, --pack-engine git: the git found on PATH
  HttpSettings http;        // local: trust and proxy, decided here (A1: the child gets only these)
};

// Everything checked before any child exists (or anything is sent to the
// service): bad input costs nothing and changes nothing. Errors: every
// refused field ("repo", "remote", "ref", "oid", "rev", "update",
// "expect_old", "updates[N].ref" and the like for several refs,
// "push_options[N]", "pack_engine", "ca_file", "proxy", "lane_dir").
tl::expected<PushRequest, FieldErrors> read_push_request(const PushArgs& a, PushSide side);

// The id --force-with-lease expects the remote's `ref` at, as git computes
// it from the repository at `repo` (absolute) and the resolved --remote.
// Errors: invalid_argument.
Result<std::string> lease_expectation(const LeaseArg& lease, const std::string& ref, const repo::GitConfig& config,
                                      const std::string& repo, const ResolvedRemote& remote);

}  // namespace courier::cli
