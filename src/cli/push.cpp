// push.cpp — `git-courier push`.
#include "cli/push.hpp"

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "auth/auth_setup.hpp"
#include "cli/http_settings.hpp"
#include "cli/journal_cmd.hpp"
#include "cli/remote_name.hpp"
#include "repo/git_config.hpp"
#include "repo/remote_tracking.hpp"
#include "repo/repository.hpp"
#include "cli/output.hpp"
#include "cli/progress_view.hpp"
#include "cli/via_client.hpp"
#include "courier/courier.hpp"
#include "wire/remote.hpp"
#include "wire/text.hpp"
#include "sys/flock.hpp"
#include "sys/process.hpp"
#include "sys/signals.hpp"
#include "transport/oid.hpp"
#include "transport/refname.hpp"

namespace courier::cli {

// A usage error: on stderr, and with --json as the JSON object too.
int push_usage(const PushArgs& a, const std::string& message) {
  std::fprintf(stderr, "git-courier: push: %s\n", wire::terminal_safe(message).c_str());
  if (a.json) {
    std::printf("%s\n", json_usage("push: " + message).c_str());
    std::fflush(stdout);
  }
  return kExitUsage;
}

namespace {

// Everything checked here is checked before any child exists: bad input
// costs nothing and changes nothing.
struct Validated {
  std::string repo;
  std::string oid;
  std::string lane;
  std::string remote;       // canonical: what is requested and printed
  std::string git_program;  // --pack-engine git: the git found on PATH
  HttpSettings http;        // trust and proxy, decided here (A1: the child gets only these)
  ResolvedRemote resolved;  // --remote as git reads it: its name, if any, and its URL
  UpdateMode update = UpdateMode::fast_forward;
  std::optional<std::string> expect_old;
};

// git's refname_match: REF as given, or under refs/, refs/tags/,
// refs/heads/, refs/remotes/ (or that remote's HEAD).
bool ref_names(const std::string& short_name, const std::string& full) {
  for (const char* prefix : {"", "refs/", "refs/tags/", "refs/heads/", "refs/remotes/"}) {
    if (full == prefix + short_name) return true;
  }
  return full == "refs/remotes/" + short_name + "/HEAD";
}

// The lease's expected id, as git computes it: EXPECT (a full id as it
// is, an empty one: the ref must not exist, else a revision of the local
// repository), or the remote-tracking ref of the pushed ref through the
// remote's fetch refspecs (none, or not in the repository: the zero id,
// i.e. the remote's ref must not exist, as git expects). Errors:
// invalid_argument.
}  // namespace

Result<std::string> lease_expectation(const PushArgs& a, const LeaseArg& lease, const repo::GitConfig& config,
                                      const std::string& repo, const ResolvedRemote& remote) {
  if (lease.ref && !ref_names(*lease.ref, a.ref)) {
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

namespace {

// --force, --force-with-lease or --expect-old into the update mode and the
// expected id. Errors: invalid_argument.
Result<void> resolve_update(const PushArgs& a, const repo::GitConfig& config, Validated& v) {
  if (a.force) {
    v.update = UpdateMode::force;
  } else if (a.expect_old) {
    if (!transport::is_valid_oid(*a.expect_old)) {
      return fail(Errc::invalid_argument,
                  "--expect-old must be a full 40-hex object id (all zeros: the ref must not exist)");
    }
    v.update = UpdateMode::expect_old;
    v.expect_old = *a.expect_old;
  } else if (a.lease) {
    auto expect = lease_expectation(a, *a.lease, config, v.repo, v.resolved);
    if (!expect) return tl::unexpected(expect.error());
    v.update = UpdateMode::expect_old;
    v.expect_old = *expect;
  }
  return {};
}

// Trust and proxy for the remote, from --ca-file, git's configuration of
// the repository and this process's environment, with git's precedence
// (cli/http_settings.hpp). The remote's name, when --remote named a
// configured remote, brings its remote.<name>.proxy; a URL has none.
// Errors: invalid_argument (a proxy or CA file that cannot be used, naming
// where it came from).
Result<HttpSettings> http_settings(const PushArgs& a, const repo::GitConfig& config, const ResolvedRemote& remote) {
  auto http = resolve_http_settings(config, remote.url, remote.name, a.ca_file, process_env());
  if (!http) return tl::unexpected(http.error());
  std::error_code ec;
  if (http->ca_file && !std::filesystem::is_regular_file(*http->ca_file, ec)) {
    return fail(Errc::invalid_argument, http->ca_source + " " + *http->ca_file + " is not a readable file");
  }
  return http;
}

Result<Validated> validate(const PushArgs& a) {
  Validated v;
  std::error_code ec;
  if (!std::filesystem::exists(a.repo, ec)) return fail(Errc::invalid_argument, "no repository at " + a.repo);
  v.repo = std::filesystem::absolute(a.repo, ec).string();
  // git's configuration, as a git command run in the repository reads it:
  // --remote may name a configured remote.
  auto config = repo::GitConfig::open(v.repo);
  if (!config) return fail(Errc::invalid_argument, "git's configuration: " + config.error().message);
  auto resolved = resolve_remote(a.remote, *config);
  if (!resolved) return tl::unexpected(resolved.error());
  v.resolved = std::move(*resolved);
  // H2: a password, an ambiguous spelling or a malformed URL is a usage
  // error here, before anything runs; from here on only the canonical form
  // (no user information) is used or printed.
  auto remote = wire::parse_remote(v.resolved.url);
  if (!remote) return tl::unexpected(remote.error());
  v.lane = remote->lane;
  v.remote = remote->canonical;
  if (auto scheme = wire::check_scheme(remote->url, a.allow_http_loopback); !scheme) {
    return fail(Errc::invalid_argument, scheme.error().message);
  }
  if (!transport::is_valid_push_refname(a.ref)) {
    return fail(Errc::invalid_argument, "'" + a.ref + "' is not a full ref name to update (e.g. refs/heads/main)");
  }
  if (a.pack_engine == "git") {
    auto git = sys::find_on_path("git");
    if (!git) return fail(Errc::invalid_argument, "--pack-engine git: " + git.error().message);
    v.git_program = *git;
  }
  if (a.oid) {
    if (!transport::is_valid_oid(*a.oid)) return fail(Errc::invalid_argument, "--oid must be a full 40-hex object id");
    if (auto ok = repo::check_gated_object(v.repo, *a.oid); !ok) return tl::unexpected(ok.error());
    v.oid = *a.oid;
  } else {
    if (auto ok = repo::check_bounded_revision("--rev", *a.rev); !ok) return tl::unexpected(ok.error());
    auto id = repo::resolve_revision(v.repo, *a.rev);
    if (!id) return tl::unexpected(id.error());
    if (auto ok = repo::check_gated_object(v.repo, *id); !ok) return tl::unexpected(ok.error());
    v.oid = *id;
  }
  if (auto ok = resolve_update(a, *config, v); !ok) return tl::unexpected(ok.error());
  auto http = http_settings(a, *config, v.resolved);
  if (!http) return tl::unexpected(http.error());
  v.http = std::move(*http);
  // H1: a lane directory we may not use is a usage error too, not a
  // delivery that fails later. Only an existing one is checked here: bad
  // input must leave nothing behind, so a missing one is created by the
  // executor once everything else has been accepted.
  auto lane_dir = a.lane_dir ? Result<std::string>(*a.lane_dir) : default_lane_dir();
  if (!lane_dir) return tl::unexpected(lane_dir.error());
  if (std::filesystem::exists(std::filesystem::symlink_status(*lane_dir, ec))) {
    if (auto dir = sys::LaneDir::open(*lane_dir); !dir) return tl::unexpected(dir.error());
  }
  return v;
}

}  // namespace

// The executor the command runs its one delivery in: one worker, a
// subreaper (the CLI forks nothing else: every orphan is a delivery's), the
// supervisor's log lines with -v (terminal or not), the child's stderr
// unless --quiet.
ExecutorOptions executor_options(const PushArgs& a, const std::string& journal, const HttpSettings& http,
                                 ProgressView& view) {
  ExecutorOptions eo;
  if (a.lane_dir) eo.lane_dir = *a.lane_dir;
  eo.journal = journal;
  if (a.state) eo.state = *a.state;
  if (a.host_id) eo.host_id = *a.host_id;
  // Recovery at start reads back what it finishes as `possible`, with this
  // command's trust settings and credential mode.
  eo.read_back = make_read_back(a.auth, http.ca_file, a.allow_http_loopback, http.proxy);
  eo.workers = 1;
  eo.subreaper = true;
  eo.on_log = [&a, &view](std::string_view line) {
    if (a.verbose && !a.quiet) view.log(line);
  };
  eo.on_child_stderr = [&a](std::string_view text) {
    if (!a.quiet) std::fprintf(stderr, "%.*s", static_cast<int>(text.size()), text.data());
  };
  return eo;
}

// Meters (ours and the remote's) on stderr: --progress/--no-progress, else
// when stderr is a terminal; never with --quiet.
bool show_meters(const PushArgs& a) { return !a.quiet && a.progress.value_or(sys::is_tty(2)); }

// The delivery as the checked arguments describe it (budget, credentials
// and observer are added by the caller).
DeliveryRequest delivery_request(const PushArgs& a, const Validated& v) {
  DeliveryRequest req;
  req.repo = v.repo;
  req.remote = v.resolved.url;
  req.ref = a.ref;
  req.oid = v.oid;
  req.update = v.update;
  req.expect_old = v.expect_old;
  req.ca_file = v.http.ca_file;
  req.proxy = v.http.proxy;
  req.allow_http_loopback = a.allow_http_loopback;
  // The remote's progress is asked for only when it will be shown.
  req.remote_progress = show_meters(a);
  if (a.delivery_id) req.id = *a.delivery_id;
  if (a.pack_engine == "git") {
    req.pack_engine = PackEngine::git;
    req.git_program = v.git_program;
  } else if (a.pack_engine == "libgit2") {
    req.pack_engine = PackEngine::libgit2;
  }  // auto: the executor finds git on PATH, or falls back to libgit2
  return req;
}

// Prints the outcome (JSON on stdout, the human line on stderr unless
// quiet and fine) and returns the exit code.
int report(const PushArgs& a, const Outcome& o, const DeliveryFacts& facts) {
  const int code = exit_code_for(o.kind);
  if (a.verbose && !a.quiet && o.pack_engine)
    std::fprintf(stderr, "git-courier: pack engine: %s\n", o.pack_engine->c_str());
  if (a.json) std::printf("%s\n", json_report(o, facts).c_str());
  if (!a.quiet || code != kExitOk) {
    if (!a.json || code != kExitOk) std::fprintf(stderr, "%s\n", wire::terminal_safe(human_line(o, facts)).c_str());
  }
  if (code != kExitOk) {
    if (const std::string hint = hint_for(o, facts); !hint.empty()) {
      std::fprintf(stderr, "hint: %s\n", wire::terminal_safe(hint).c_str());
    }
  }
  std::fflush(stdout);
  std::fflush(stderr);
  return code;
}

// One read-back of the delivery's ref, recorded in the outcome.
void read_back_into(const PushArgs& a, const HttpSettings& http, const DeliveryFacts& f, Outcome& o) {
  ObservedAfter seen = make_read_back(a.auth, http.ca_file, a.allow_http_loopback, http.proxy)(f.remote, f.ref);
  seen.matches_this_delivery = seen.error.empty() && seen.oid == f.oid;
  o.observed_after = std::move(seen);
}

// The outcome, and with --read-back after `possible` one look at the ref:
// after the turn has ended and its seat is released (J3), never inside it;
// printed after the outcome, unless --json waits for it to include it.
int report_and_read_back(const PushArgs& a, const HttpSettings& http, const DeliveryFacts& facts, Outcome& o) {
  const bool look = a.read_back && o.remote_effect == RemoteEffect::possible;
  if (look && a.json) read_back_into(a, http, facts, o);
  const int code = report(a, o, facts);
  if (look && !a.json) {
    read_back_into(a, http, facts, o);
    std::fprintf(stderr, "%s\n", wire::terminal_safe(observed_line(*o.observed_after)).c_str());
  }
  return code;
}

int run_push(const PushArgs& a) {
  if (a.via) return run_push_via(a);
  // The command's deadline counts from here: the checks and the revision
  // lookup below spend the same budget as the delivery does.
  const sys::MonoNs command_deadline = sys::mono_after_ms(sys::mono_now_ns(), a.deadline.count());
  auto v = validate(a);
  if (!v) return push_usage(a, v.error().message);

  // SIGINT/SIGTERM/SIGHUP become a revocation; blocked before any thread
  // starts so that only the watcher ever sees them. A hang-up (the terminal
  // or ssh session gone) must not kill the command before the child's stop
  // is confirmed and its scratch and cgroup directories are removed.
  std::atomic<int> signals{0};
  std::mutex handle_mu;
  DeliveryHandle* live = nullptr;
  auto watcher = sys::SignalWatcher::start([&](int signo) {
    const int n = ++signals;
    std::lock_guard<std::mutex> lock(handle_mu);
    if (n == 1) {
      const char* what = signo == SIGINT ? "interrupted" : signo == SIGHUP ? "hung up" : "terminated";
      std::fprintf(stderr,
                   "git-courier: %s: revoking the delivery and confirming the child's stop "
                   "(cancelling is not rollback)\n",
                   what);
      if (live) {
        live->revoke(signo == SIGINT   ? "interrupted (SIGINT)"
                     : signo == SIGHUP ? "hung up (SIGHUP)"
                                       : "terminated (SIGTERM)");
      }
    } else {
      std::fprintf(stderr, "git-courier: still confirming the child's stop; the outcome follows\n");
    }
  });
  if (!watcher) return push_usage(a, "cannot watch signals: " + watcher.error().message);

  auto journal = a.no_journal || a.state ? Result<std::string>(std::string()) : journal_path(a.journal);
  if (!journal) return push_usage(a, journal.error().message);
  ProgressView view(ProgressView::Options{show_meters(a), !a.quiet, stderr});
  view.set_lane(v->lane);
  const ExecutorOptions eo = executor_options(a, *journal, v->http, view);

  DeliveryRequest req = delivery_request(a, *v);
  // What is left of the command's budget. The turn's deadline is fixed at
  // submit() from it; the tokens' is taken just before, so it can only be
  // earlier. Nothing left: the executor ends the delivery at once,
  // deadline_killed before any dispatch.
  const sys::MonoNs now = sys::mono_now_ns();
  const std::int64_t left_ms = command_deadline > now ? (command_deadline - now) / sys::kNsPerMs : 0;
  req.budget = std::chrono::milliseconds(left_ms);
  auto auth = auth::AuthSetup::from_spec(a.auth, req, sys::mono_after_ms(now, left_ms));
  if (!auth) return push_usage(a, auth.error().message);
  req.mint = (*auth)->mint();
  req.mint_binds_payload = (*auth)->binds_payload();
  req.on_event = [&view](const DeliveryEvent& e) { view.on(e); };

  Outcome o;
  {
    Executor executor(eo);
    DeliveryHandle handle = executor.submit(req);
    {
      std::lock_guard<std::mutex> lock(handle_mu);
      live = &handle;
      if (signals.load() > 0) handle.revoke("interrupted before the delivery started");
    }
    o = handle.wait();
    std::lock_guard<std::mutex> lock(handle_mu);
    live = nullptr;
  }
  watcher->reset();
  view.finish();

  // The outcome first: telling the credential helpers whether their
  // credential worked is bookkeeping after the fact, and a slow helper
  // must not hold back the answer. It has a bound of its own
  // (kCredentialSettleBound).
  const int code = report_and_read_back(a, v->http, DeliveryFacts{v->remote, a.ref, v->oid, a.auth}, o);
  (*auth)->after(o);
  return code;
}

}  // namespace courier::cli
