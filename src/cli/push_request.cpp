// push_request.cpp — a `push` command line read into one delivery request
// and judged at once (see push_request.hpp): the command line's own
// readings (git's configuration, revisions, the lease), then validate().
#include "cli/push_request.hpp"

#include <algorithm>
#include <filesystem>

#include "auth/auth_spec.hpp"
#include "cli/refspec_resolve.hpp"
#include "cli/ssh_settings.hpp"
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
  const char* const order[] = {"repo",       "remote",  "ref",          "oid",         "rev",         "update",
                               "expect_old", "updates", "push_options", "pack_engine", "proxy",       "ca_file",
                               "lane_dir",   "auth",    "ssh_key",      "known_hosts", "ssh_program", "read_back"};
  for (int i = 0; i < static_cast<int>(std::size(order)); ++i) {
    if (field == order[i]) return i;
  }
  // "updates[N].ref" and the like: with the set, in the order given.
  if (field.rfind("updates[", 0) == 0) return 7;
  if (field.rfind("push_options[", 0) == 0) return 8;
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

// --force (or the refspec's `+`), --force-with-lease or --expect-old into
// one ref's update mode and expected id (validate() judges the id's
// spelling). A lease naming another ref leaves this one's rule alone, as
// git's --force-with-lease=REF does.
void read_update(const PushArgs& a, const std::string& ref, bool force, const Reading& r, RefUpdate& u,
                 FieldErrors& errors) {
  const bool leased = a.lease && (!a.lease->ref || refname_matches(*a.lease->ref, ref));
  if (a.force || (force && !leased && !a.expect_old)) {
    u.update = UpdateMode::force;
  } else if (a.expect_old) {
    u.update = UpdateMode::expect_old;
    u.expect_old = *a.expect_old;
  } else if (leased && r.config && r.remote_ok) {
    auto expect = lease_expectation(*a.lease, ref, *r.config, r.req.repo, r.resolved);
    if (!expect) return refuse(errors, "update", kBadField, expect.error().message);
    u.update = UpdateMode::expect_old;
    u.expect_old = *expect;
  }
}

void read_update(const PushArgs& a, Reading& r, FieldErrors& errors) {
  RefUpdate u;
  read_update(a, a.ref, a.force, r, u, errors);
  r.req.update = u.update;
  r.req.expect_old = u.expect_old;
}

// Stands for a revision the service looks up (push --via): an id no
// object has, so that validate() judges the rest of the update.
constexpr std::string_view kViaRevision = "1111111111111111111111111111111111111111";

// One ref of several (or a deletion): its object (the zero id deletes),
// its update rule. Errors are the update's fields ("updates[N].rev").
RefUpdate read_ref(const PushArgs& a, PushSide side, const RefArg& ref, const std::string& at, Reading& r,
                   FieldErrors& errors) {
  RefUpdate u;
  u.ref = ref.ref;
  read_update(a, ref.ref, ref.force, r, u, errors);
  if (!ref.rev) {
    u.oid = std::string(transport::kZeroOid);
  } else if (side == PushSide::via) {
    u.oid = std::string(kViaRevision);
  } else if (r.repo_ok) {
    auto id = repo::resolve_revision(r.req.repo, *ref.rev);
    if (id) {
      u.oid = *id;
    } else {
      r.object_ok = false;
      refuse(errors, at + "rev", kBadField, id.error().message);
    }
  }
  return u;
}

// The refs of a push of several refspecs or of a deletion: one update each,
// as the one-update form when there is one (its fields "ref", "oid").
void read_refs(const PushArgs& a, PushSide side, Reading& r, FieldErrors& errors) {
  if (a.expect_old && a.refs.size() > 1) {
    refuse(errors, "update", kBadField,
           "--expect-old names one id and this push updates " + std::to_string(a.refs.size()) +
               " refs: give --force-with-lease=REF:EXPECT for each ref instead");
  }
  std::vector<RefUpdate> updates;
  for (std::size_t i = 0; i < a.refs.size(); ++i) {
    const std::string at = a.refs.size() == 1 ? "" : "updates[" + std::to_string(i) + "].";
    updates.push_back(read_ref(a, side, a.refs[i], at, r, errors));
  }
  if (updates.size() == 1) {
    r.req.ref = updates[0].ref;
    r.req.oid = updates[0].oid;
    r.req.update = updates[0].update;
    r.req.expect_old = updates[0].expect_old;
    return;
  }
  r.req.updates = std::move(updates);
}

// --atomic/--no-atomic, and the push options: -o as given, else git's
// push.pushOption (a multi-valued key; an empty value clears the ones
// before it, as git reads it).
void read_set_options(const PushArgs& a, Reading& r) {
  r.req.atomic = a.atomic ? (*a.atomic ? Atomicity::atomic : Atomicity::non_atomic) : Atomicity::automatic;
  if (a.push_options_given || !r.config) {
    r.req.push_options = a.push_options;
    return;
  }
  for (auto& value : config_list(*r.config, "push.pushOption")) {
    if (value.empty()) {
      r.req.push_options.clear();
    } else {
      r.req.push_options.push_back(std::move(value));
    }
  }
}

// With --via, a revision is the service's to look up: its stand-in goes.
void clear_via_revisions(const PushArgs& a, DeliveryRequest& req) {
  for (auto& u : req.updates) {
    if (u.oid == kViaRevision) u.oid.clear();
  }
  if (!a.oid && req.oid == kViaRevision) req.oid.clear();
}

// A5: a push to an ssh remote reads its key (--auth ssh-key:FILE), the
// known-hosts file and the ssh program (ssh_settings.hpp); --auth meant for
// the other kind of remote is refused, as --read-back over ssh is. With
// --via the service holds the key and the known hosts: nothing is read.
void read_ssh(const PushArgs& a, PushSide side, Reading& r, FieldErrors& errors) {
  auto parsed = wire::parse_remote(r.req.remote);
  if (!r.remote_ok || !parsed || side == PushSide::via) return;  // validate() says what is wrong
  const bool ssh = parsed->url.scheme == "ssh";
  const bool ssh_auth = a.auth.rfind("ssh-key:", 0) == 0;
  if (ssh && !ssh_auth && a.auth != "none") {
    return refuse(errors, "auth", kBadField,
                  "--auth " + a.auth + " is for https remotes; " + parsed->canonical +
                      " is an ssh remote: give --auth ssh-key:FILE");
  }
  if (!ssh) {
    if (ssh_auth) {
      refuse(errors, "auth", kBadField,
             "--auth ssh-key:FILE is for ssh remotes; " + parsed->canonical +
                 " is not one: give --auth credential, bearer:FILE or key:FILE");
    }
    return;
  }
  if (a.read_back) {
    refuse(errors, "read_back", kBadField,
           "--read-back is not available for an ssh remote: check the ref with git ls-remote " + parsed->canonical);
  }
  std::error_code ec;
  if (a.known_hosts) r.req.known_hosts = std::filesystem::absolute(*a.known_hosts, ec).lexically_normal().string();
  auto program = resolve_ssh_program(r.config ? &*r.config : nullptr, process_env());
  if (!program) refuse(errors, "ssh_program", kBadField, program.error().message);
  if (program) r.req.ssh_program = *program;
  if (!ssh_auth) return;
  auto spec = auth::parse_auth_spec(a.auth);
  if (!spec) return refuse(errors, "auth", kBadField, spec.error().message);
  auto key = load_cli_ssh_key(spec->file, a.ssh_passphrase_file);
  if (!key) return refuse(errors, "auth", kBadField, key.error().message);
  r.req.ssh_key = *key;
}

// validate()'s refusals as this command line names them: what an earlier
// reading already refused is not said twice; the object of --rev is "rev";
// with --via the service names the ssh key (its credential).
void take_refusals(const PushArgs& a, PushSide side, const Reading& r, FieldErrors refused, FieldErrors& errors) {
  const bool auth_refused =
      std::any_of(errors.begin(), errors.end(), [](const FieldError& e) { return e.field == "auth"; });
  for (auto& e : refused) {
    if (e.field == "repo" && !r.repo_ok) continue;
    if (e.field == "remote" && !r.remote_ok) continue;
    if (e.field == "ssh_key" && (side == PushSide::via || auth_refused)) continue;
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

Result<std::string> lease_expectation(const LeaseArg& lease, const std::string& ref, const repo::GitConfig& config,
                                      const std::string& repo, const ResolvedRemote& remote) {
  if (lease.ref && !refname_matches(*lease.ref, ref)) {
    return fail(Errc::invalid_argument, "--force-with-lease=" + *lease.ref + " names another ref than --ref " + ref);
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
                    ref + ":EXPECT");
  }
  auto tracking = repo::remote_tracking(repo, config_list(config, "remote." + *remote.name + ".fetch"), ref);
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
  if (a.refs.empty()) {
    read_object(a, side, r, errors);
    read_update(a, r, errors);
  } else {
    read_refs(a, side, r, errors);
  }
  read_set_options(a, r);
  read_ssh(a, side, r, errors);
  // H2: a password, an ambiguous spelling or a malformed URL is a usage
  // error here, before anything runs (with --via: before anything leaves
  // this process); from here on only the canonical form is used or printed.
  ValidateOptions options;
  if (side == PushSide::local && r.repo_ok) options.object_check = repo::check_gated_object;
  if (side == PushSide::via) {
    // The service refuses user information and judges plain http to
    // loopback by its own --allow-http-loopback: the rest is judged here.
    options.refuse_user_in_remote = "name a credential of the service instead (--credential)";
    options.ssh_key_elsewhere = true;  // the service's ssh-key credential
    r.req.allow_http_loopback = true;
  }
  // The service resolves --rev.
  if (side == PushSide::via && a.refs.empty() && !a.oid) r.req.oid = std::string(kViaRevision);
  PushRequest out;
  auto checked = validate(r.req, options);
  if (checked) {
    out.checked = std::move(*checked);
    if (side == PushSide::via) clear_via_revisions(a, out.checked.request());
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
  if (out.checked.valid() && r.config && out.checked.parts()->remote.url.scheme != "ssh") read_http(a, r, out, errors);
  check_lane_dir(a, errors);
  if (!errors.empty()) return refused(std::move(errors));
  return out;
}

}  // namespace courier::cli
