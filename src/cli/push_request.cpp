// push_request.cpp — a `push` command line read into one delivery request
// and judged at once (see push_request.hpp): the command line's own
// readings (git's configuration, revisions, the lease), then validate().
#include "cli/push_request.hpp"

#include <algorithm>
#include <filesystem>

#include "cli/refspec_resolve.hpp"
#include "repo/remote_tracking.hpp"
#include "repo/repository.hpp"
#include "request/checked_parts.hpp"
#include "sys/flock.hpp"
#include "sys/process.hpp"
#include "transport/oid.hpp"

namespace courier::cli {

namespace {

void refuse(FieldErrors& errors, std::string field, const char* code, std::string message) {
  errors.push_back(FieldError{std::move(field), code, std::move(message)});
}

// Where a field's refusal stands among the others: the order a person
// would fix them in.
int rank(const std::string& field) {
  const char* const order[] = {"repo",       "remote",      "ref",   "oid",     "rev",     "update",
                               "expect_old", "pack_engine", "proxy", "ca_file", "lane_dir"};
  for (int i = 0; i < static_cast<int>(std::size(order)); ++i) {
    if (field == order[i]) return i;
  }
  return static_cast<int>(std::size(order));
}

tl::unexpected<FieldErrors> refused(FieldErrors errors) {
  std::stable_sort(errors.begin(), errors.end(),
                   [](const FieldError& a, const FieldError& b) { return rank(a.field) < rank(b.field); });
  return tl::unexpected(std::move(errors));
}

// What the command line reads before the request can be judged.
struct Reading {
  DeliveryRequest req;
  std::optional<repo::GitConfig> config;
  ResolvedRemote resolved;
  bool repo_ok = false;
  bool remote_ok = true;  // --remote named something (a URL, or a configured remote)
  bool object_ok = true;  // --rev could be looked up
};

// --repo, and git's configuration as a git command run in the repository
// reads it (--remote may name a configured remote).
void read_repo(const PushArgs& a, PushSide side, Reading& r, FieldErrors& errors) {
  std::error_code ec;
  if (!std::filesystem::exists(a.repo, ec)) return refuse(errors, "repo", kBadField, "no repository at " + a.repo);
  if (side == PushSide::via) {
    r.req.repo = std::filesystem::absolute(a.repo, ec).lexically_normal().string();
    if (r.req.repo.size() > 1 && r.req.repo.back() == '/') r.req.repo.pop_back();
  } else {
    r.req.repo = std::filesystem::absolute(a.repo, ec).string();
  }
  auto config = repo::GitConfig::open(r.req.repo);
  if (!config) return refuse(errors, "repo", kBadField, "git's configuration: " + config.error().message);
  r.config = std::move(*config);
  r.repo_ok = true;
}

// The object: --oid as given, or --rev looked up in the repository (with
// --via, the service looks it up).
void read_object(const PushArgs& a, PushSide side, Reading& r, FieldErrors& errors) {
  if (a.oid) {
    r.req.oid = *a.oid;
    return;
  }
  if (!a.rev || side == PushSide::via || !r.repo_ok) {
    r.object_ok = side == PushSide::via;
    return;
  }
  r.object_ok = false;
  if (auto ok = repo::check_bounded_revision("--rev", *a.rev); !ok) {
    return refuse(errors, "rev", kBadField, ok.error().message);
  }
  auto id = repo::resolve_revision(r.req.repo, *a.rev);
  if (!id) return refuse(errors, "rev", kBadField, id.error().message);
  r.req.oid = *id;
  r.object_ok = true;
}

// --force, --force-with-lease or --expect-old into the update mode and the
// expected id (validate() judges the id's spelling).
void read_update(const PushArgs& a, Reading& r, FieldErrors& errors) {
  if (a.force) {
    r.req.update = UpdateMode::force;
  } else if (a.expect_old) {
    r.req.update = UpdateMode::expect_old;
    r.req.expect_old = *a.expect_old;
  } else if (a.lease && r.config && r.remote_ok) {
    auto expect = lease_expectation(a, *a.lease, *r.config, r.req.repo, r.resolved);
    if (!expect) return refuse(errors, "update", kBadField, expect.error().message);
    r.req.update = UpdateMode::expect_old;
    r.req.expect_old = *expect;
  }
}

// validate()'s refusals as this command line names them: what an earlier
// reading already refused is not said twice; the object of --rev is "rev".
void take_refusals(const PushArgs& a, PushSide side, const Reading& r, FieldErrors refused, FieldErrors& errors) {
  for (auto& e : refused) {
    if (e.field == "repo" && !r.repo_ok) continue;
    if (e.field == "remote" && !r.remote_ok) continue;
    if (e.field == "oid" && !a.oid) {
      if (!r.object_ok || side == PushSide::via) continue;
      e.field = "rev";
    }
    errors.push_back(std::move(e));
  }
}

// Trust and proxy for the remote, from --ca-file, git's configuration of
// the repository and this process's environment, with git's precedence
// (cli/http_settings.hpp). The remote's name, when --remote named a
// configured remote, brings its remote.<name>.proxy; a URL has none.
void read_http(const PushArgs& a, const Reading& r, PushRequest& out, FieldErrors& errors) {
  auto http = resolve_http_settings(*r.config, out.checked.parts()->remote, r.resolved.name, a.ca_file, process_env());
  if (!http) {
    const bool proxy = http.error().message.find("proxy") != std::string::npos;
    return refuse(errors, proxy ? "proxy" : "ca_file", kBadField, http.error().message);
  }
  std::error_code ec;
  if (http->ca_file && !std::filesystem::is_regular_file(*http->ca_file, ec)) {
    return refuse(errors, "ca_file", kBadField, http->ca_source + " " + *http->ca_file + " is not a readable file");
  }
  if (auto ok = out.checked.set_proxy(http->proxy); !ok) {
    return refuse(errors, "proxy", kBadField, http->proxy_source + ": " + describe(ok.error()));
  }
  out.checked.request().ca_file = http->ca_file;
  out.http = std::move(*http);
}

// H1: a lane directory we may not use is a usage error too, not a delivery
// that fails later. Only an existing one is checked here: bad input must
// leave nothing behind, so a missing one is created by the executor once
// everything else has been accepted.
void check_lane_dir(const PushArgs& a, FieldErrors& errors) {
  auto lane_dir = a.lane_dir ? Result<std::string>(*a.lane_dir) : default_lane_dir();
  if (!lane_dir) return refuse(errors, "lane_dir", kBadField, lane_dir.error().message);
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(*lane_dir, ec))) {
    if (auto dir = sys::LaneDir::open(*lane_dir); !dir) refuse(errors, "lane_dir", kBadField, dir.error().message);
  }
}

}  // namespace

Result<std::string> lease_expectation(const PushArgs& a, const LeaseArg& lease, const repo::GitConfig& config,
                                      const std::string& repo, const ResolvedRemote& remote) {
  if (lease.ref && !refname_matches(*lease.ref, a.ref)) {
    return fail(Errc::invalid_argument, "--force-with-lease=" + *lease.ref + " names another ref than --ref " + a.ref);
  }
  if (lease.expect) {
    if (lease.expect->empty()) return std::string(transport::kZeroOid);
    if (transport::is_valid_oid(*lease.expect)) return *lease.expect;
    if (auto ok = repo::check_bounded_revision("--force-with-lease", *lease.expect); !ok)
      return tl::unexpected(ok.error());
    auto id = repo::resolve_revision(repo, *lease.expect);
    if (!id)
      return fail(Errc::invalid_argument, "--force-with-lease: cannot parse expected object name '" + *lease.expect +
                                              "' (" + id.error().message + ")");
    return *id;
  }
  if (!remote.name) {
    return fail(Errc::invalid_argument,
                "--force-with-lease without :EXPECT reads the expected id from a remote-tracking ref, which only a "
                "configured remote has: with a URL, give --force-with-lease=" +
                    a.ref + ":EXPECT");
  }
  auto tracking = repo::remote_tracking(repo, config_list(config, "remote." + *remote.name + ".fetch"), a.ref);
  if (!tracking) return tl::unexpected(tracking.error());
  if (*tracking && (*tracking)->oid) return *(*tracking)->oid;
  return std::string(transport::kZeroOid);
}

tl::expected<PushRequest, FieldErrors> read_push_request(const PushArgs& a, PushSide side) {
  FieldErrors errors;
  Reading r;
  read_repo(a, side, r, errors);
  r.resolved = ResolvedRemote{std::nullopt, a.remote};
  // Without the repository's configuration a remote's name cannot be read:
  // only a URL is judged then.
  if (!r.config && a.remote.find("://") == std::string::npos) r.remote_ok = false;
  if (r.config) {
    auto resolved = resolve_remote(a.remote, *r.config);
    if (resolved) {
      r.resolved = std::move(*resolved);
    } else {
      refuse(errors, "remote", kBadRemote, resolved.error().message);
      r.remote_ok = false;
    }
  }
  r.req.remote = r.resolved.url;
  r.req.ref = a.ref;
  r.req.allow_http_loopback = a.allow_http_loopback;
  read_object(a, side, r, errors);
  read_update(a, r, errors);
  // H2: a password, an ambiguous spelling or a malformed URL is a usage
  // error here, before anything runs (with --via: before anything leaves
  // this process); from here on only the canonical form is used or printed.
  ValidateOptions options;
  if (side == PushSide::local && r.repo_ok) options.object_check = repo::check_gated_object;
  if (side == PushSide::via) {
    // The service refuses user information and judges plain http to
    // loopback by its own --allow-http-loopback: the rest is judged here.
    options.refuse_user_in_remote = "name a credential of the service instead (--credential)";
    r.req.allow_http_loopback = true;
  }
  if (side == PushSide::via && !a.oid) r.req.oid = std::string(transport::kZeroOid);  // the service resolves --rev
  PushRequest out;
  auto checked = validate(r.req, options);
  if (checked) {
    out.checked = std::move(*checked);
    if (side == PushSide::via && !a.oid) out.checked.request().oid.clear();
  } else {
    take_refusals(a, side, r, std::move(checked.error()), errors);
  }
  out.resolved = r.resolved;
  if (side == PushSide::via) {
    if (!errors.empty()) return refused(std::move(errors));
    return out;
  }
  if (a.pack_engine == "git") {
    auto git = sys::find_on_path("git");
    if (git) {
      out.git_program = *git;
    } else {
      refuse(errors, "pack_engine", kBadField, "--pack-engine git: " + git.error().message);
    }
  }
  if (out.checked.valid() && r.config) read_http(a, r, out, errors);
  check_lane_dir(a, errors);
  if (!errors.empty()) return refused(std::move(errors));
  return out;
}

}  // namespace courier::cli
