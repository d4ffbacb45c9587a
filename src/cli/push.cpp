// push.cpp — `git-courier push`.
#include "cli/push.hpp"

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "auth/auth_setup.hpp"
#include "cli/command_clock.hpp"
#include "cli/forced_update.hpp"
#include "cli/http_settings.hpp"
#include "cli/journal_cmd.hpp"
#include "cli/output.hpp"
#include "cli/progress_view.hpp"
#include "cli/push_request.hpp"
#include "cli/tracking_update.hpp"
#include "cli/via_client.hpp"
#include "courier/courier.hpp"
#include "sys/clock.hpp"
#include "sys/process.hpp"
#include "sys/signals.hpp"
#include "transport/trust_words.hpp"
#include "wire/text.hpp"

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

void say_signalled(int signo, int nth, ProgressView& view) {
  if (nth > 1) return view.say("git-courier: still confirming the child's stop; the outcome follows");
  const std::string what = signo == SIGINT ? "interrupted" : signo == SIGHUP ? "hung up" : "terminated";
  view.say("git-courier: " + what +
           ": revoking the delivery and confirming the child's stop (cancelling is not rollback)");
}

// Every refused field, each on a line of its own, and with --json all of
// them in the usage object's "errors".
int push_refused(const PushArgs& a, const FieldErrors& errors) {
  for (const auto& e : errors) {
    std::fprintf(stderr, "git-courier: push: %s\n", wire::terminal_safe(e.message).c_str());
  }
  if (a.json) {
    std::printf("%s\n", json_usage("push: " + describe(errors), errors).c_str());
    std::fflush(stdout);
  }
  return kExitUsage;
}

// What the command's children are spawned with (the early child's too):
// a subreaper (the CLI forks nothing else: every orphan is a delivery's),
// the supervisor's log lines with -v (terminal or not), the child's stderr
// unless --quiet.
ExecutorOptions child_options(const PushArgs& a, ProgressView& view) {
  ExecutorOptions eo;
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

// The executor the command runs its one delivery in: one worker, the
// children as child_options says.
ExecutorOptions executor_options(const PushArgs& a, const std::string& journal, const HttpSettings& http,
                                 ProgressView& view) {
  ExecutorOptions eo = child_options(a, view);
  if (a.lane_dir) eo.lane_dir = *a.lane_dir;
  eo.journal = journal;
  if (a.state) eo.state = *a.state;
  if (a.host_id) eo.host_id = *a.host_id;
  // Recovery at start reads back what it finishes as `possible`, with this
  // command's trust settings and credential mode.
  eo.read_back = make_read_back(a.auth, http.ca_file, a.allow_http_loopback, http.proxy);
  return eo;
}

// Meters (ours and the remote's) on stderr: --progress/--no-progress, else
// when stderr is a terminal; never with --quiet.
bool show_meters(const PushArgs& a) { return !a.quiet && a.progress.value_or(sys::is_tty(2)); }

ProgressView::Options progress_options(const PushArgs& a) {
  ProgressView::Options o{show_meters(a), !a.quiet, a.verbose, stderr};
  return o;
}

// The delivery as the checked arguments describe it, with what only a
// local push adds (trust, proxy, meters, id, pack engine); budget,
// credentials and observer are added by the caller.
CheckedRequest delivery_request(const PushArgs& a, const PushRequest& v) {
  CheckedRequest checked = v.checked;
  DeliveryRequest& req = checked.request();
  // The remote's progress is asked for only when it will be shown.
  req.remote_progress = show_meters(a);
  req.ca_source = v.http.ca_source;
  // T1: with -v the trust anchor is said before anything is sent, as git's
  // "CAfile: ..." is.
  if (a.verbose && !a.quiet) {
    const std::string trust = transport::trust_anchor_words(v.http.ca_file, v.http.ca_source);
    std::fprintf(stderr, "git-courier: trust: %s\n", wire::terminal_safe(trust).c_str());
  }
  if (a.delivery_id) req.id = *a.delivery_id;
  if (a.pack_engine == "git") {
    req.pack_engine = PackEngine::git;
    req.git_program = v.git_program;
  } else if (a.pack_engine == "libgit2") {
    req.pack_engine = PackEngine::libgit2;
  }  // auto: the executor finds git on PATH, or falls back to libgit2
  return checked;
}

namespace {

// Which deadline ended the delivery (X-OUT2): the default one says how to
// give another.
std::string deadline_hint(const PushArgs& a) {
  const auto ms = a.deadline.count();
  const std::string length = ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
  if (a.deadline != kDefaultDeadline) return "the deadline was --deadline " + length + " from the command's start";
  return "the deadline was the default, " + length +
         " from the command's start: give a longer one with --deadline (e.g. --deadline 10m) for a large push";
}

}  // namespace

namespace {

// A push of several refs or of a deletion: each ref's line as git's summary
// says it, on stderr (with --quiet only when a ref was refused, as git's).
void tell_refs(const PushArgs& a, const Outcome& o, const DeliveryFacts& facts) {
  if (facts.asked.empty() || o.refs.empty()) return;
  if (a.quiet && !any_ref_refused(o.refs)) return;
  const std::string repo = a.repo;
  const ForcedProbe forced = [&repo](const AskedRef& asked, const RefOutcome& r) {
    Outcome one;
    one.kind = OutcomeKind::delivered;
    one.old_oid = r.old_oid;
    return forced_update(repo, asked.update, r.ref, r.oid, one);
  };
  for (const auto& line : ref_summary(facts.remote, facts.asked, o.refs, forced)) {
    std::fprintf(stderr, "%s\n", wire::terminal_safe(line).c_str());
  }
  if (any_ref_refused(o.refs)) {
    std::fprintf(stderr, "error: failed to push some refs to '%s'\n", wire::terminal_safe(facts.remote).c_str());
  }
}

}  // namespace

// Prints the outcome (JSON on stdout, the human line on stderr unless
// quiet and fine) and returns the exit code.
int report(const PushArgs& a, const Outcome& o, const DeliveryFacts& facts) {
  const int code = exit_code_for(o.kind);
  if (a.verbose && !a.quiet && o.pack_engine)
    std::fprintf(stderr, "git-courier: pack engine: %s\n", o.pack_engine->c_str());
  if (a.json) std::printf("%s\n", json_report(o, facts).c_str());
  tell_refs(a, o, facts);
  if (!a.quiet || code != kExitOk) {
    if (!a.json || code != kExitOk) std::fprintf(stderr, "%s\n", wire::terminal_safe(human_line(o, facts)).c_str());
  }
  if (code != kExitOk) {
    std::string hint = hint_for(o, facts);
    if (hint.empty() && o.kind == OutcomeKind::deadline_killed) hint = deadline_hint(a);
    if (!hint.empty()) std::fprintf(stderr, "hint: %s\n", wire::terminal_safe(hint).c_str());
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

void track(const PushArgs& a, const DeliveryFacts& facts, const PushedRef& pushed, const Outcome& o) {
  if (facts.asked.size() > 1) return update_tracking_refs(a, pushed.repo, pushed.remote_name, o);
  update_tracking(a, pushed, o);
}

DeliveryFacts push_facts(const PushArgs& a, const CheckedRequest& checked) {
  const auto& updates = checked.updates();
  DeliveryFacts facts{checked.remote(), a.ref, checked.request().oid, a.auth};
  if (a.refs.empty()) return facts;
  facts.ref = updates.front().ref;
  facts.oid = updates.front().oid;
  for (std::size_t i = 0; i < a.refs.size() && i < updates.size(); ++i) {
    facts.asked.push_back(AskedRef{a.refs[i].rev.value_or(""), updates[i].ref, updates[i].update});
  }
  return facts;
}

// The outcome first: telling the credential helpers whether their
// credential worked is bookkeeping after the fact, and a slow helper must
// not hold back the answer. It has a bound of its own
// (kCredentialSettleBound).
int conclude_push(const PushArgs& a, const PushRequest& v, auth::AuthSetup& auth, Outcome& o) {
  const DeliveryRequest& asked = v.checked.request();
  DeliveryFacts facts = push_facts(a, v.checked);
  facts.forced = forced_update(asked.repo, asked.update, asked.ref, asked.oid, o);
  const int code = report_and_read_back(a, v.http, facts, o);
  track(a, facts, PushedRef{asked.repo, v.resolved.name, facts.ref, facts.oid}, o);
  auth.after(o);
  return code;
}

namespace {

// The request's budget, what is left of the command's: the turn's deadline
// is fixed at submit() from it; the tokens' is taken just before, so it
// can only be earlier. Nothing left: the executor ends the delivery at
// once, deadline_killed before any dispatch. Then the credentials the
// request mints with. Errors: those of auth::AuthSetup::from_spec.
Result<std::unique_ptr<auth::AuthSetup>> budget_and_auth(const PushArgs& a, DeliveryRequest& req,
                                                         sys::MonoNs command_deadline) {
  const sys::MonoNs now = sys::mono_now_ns();
  const std::int64_t left_ms = command_deadline > now ? (command_deadline - now) / sys::kNsPerMs : 0;
  req.budget = std::chrono::milliseconds(left_ms);
  auto auth = auth::AuthSetup::from_spec(a.auth, req, sys::mono_after_ms(now, left_ms));
  if (!auth) return auth;
  req.mint = (*auth)->mint();
  req.mint_binds_payload = (*auth)->binds_payload();
  req.mint_after_challenge = (*auth)->after_challenge();
  return auth;
}

}  // namespace

int run_push(const PushArgs& parsed, const SettlePush& settle) {
  if (parsed.via) {
    auto settled = settle(parsed);
    return settled ? run_push_via(*settled) : settled.error();
  }
  // The command's deadline counts from here: the settling, the checks and
  // the revision lookup below spend the same budget as the delivery does.
  const sys::MonoNs command_deadline = sys::mono_after_ms(sys::mono_now_ns(), parsed.deadline.count());

  // SIGINT/SIGTERM/SIGHUP become a revocation; blocked before any thread
  // starts so that only the watcher ever sees them. A hang-up (the terminal
  // or ssh session gone) must not kill the command before the child's stop
  // is confirmed and its scratch and cgroup directories are removed.
  ProgressView view(progress_options(parsed));
  std::atomic<int> signals{0};
  std::mutex handle_mu;
  DeliveryHandle* live = nullptr;
  auto watcher = sys::SignalWatcher::start([&](int signo) {
    const int n = ++signals;
    std::lock_guard<std::mutex> lock(handle_mu);
    say_signalled(signo, n, view);
    if (n == 1) {
      if (live) {
        live->revoke(signo == SIGINT   ? "interrupted (SIGINT)"
                     : signo == SIGHUP ? "hung up (SIGHUP)"
                                       : "terminated (SIGTERM)");
      }
    }
  });
  if (!watcher) return push_usage(parsed, "cannot watch signals: " + watcher.error().message);

  // The child first: its exec and library loading overlap libgit2's
  // loading, the settling, the checks, the journal and the lane below
  // (settling changes none of the options the child is spawned with). It
  // holds no lane and has no job until the delivery's seat hands it both;
  // a command that ends before that (a usage error, a refused request, a
  // replayed id) stops it and confirms its stop (S5) when `early` goes out
  // of scope.
  std::shared_ptr<EarlyChild> early = start_early_child(child_options(parsed, view));
  command_clock().early = sys::mono_now_ns();
  auto settled = settle(parsed);
  if (!settled) return settled.error();
  const PushArgs& a = *settled;
  auto v = read_push_request(a, PushSide::local);
  if (!v) return push_refused(a, v.error());
  command_clock().checked = sys::mono_now_ns();
  view.set_lane(v->checked.lane());

  auto journal = a.no_journal || a.state ? Result<std::string>(std::string()) : journal_path(a.journal);
  if (!journal) return push_usage(a, journal.error().message);
  ExecutorOptions eo = executor_options(a, *journal, v->http, view);
  eo.early_child = early;

  CheckedRequest checked = delivery_request(a, *v);
  DeliveryRequest& req = checked.request();
  auto auth = budget_and_auth(a, req, command_deadline);
  if (!auth) return push_usage(a, auth.error().message);
  req.on_event = [&view](const DeliveryEvent& e) { view.on(e); };

  Outcome o;
  {
    Executor executor(eo);
    command_clock().executor = sys::mono_now_ns();
    DeliveryHandle handle = executor.submit(std::move(checked));
    {
      std::lock_guard<std::mutex> lock(handle_mu);
      live = &handle;
      if (signals.load() > 0) handle.revoke("interrupted before the delivery started");
    }
    o = handle.wait();
    command_clock().outcome = sys::mono_now_ns();
    std::lock_guard<std::mutex> lock(handle_mu);
    live = nullptr;
  }
  watcher->reset();
  view.finish();
  return conclude_push(a, *v, **auth, o);
}

}  // namespace courier::cli
