// crash-points.cpp — the crash-point harness (J1-J5, S5): for each
// scenario a delivery can take, its submitting process (fixtures/
// crash_host.cpp) is SIGKILLed at every step boundary of the journal, before
// and after each write (journal/step_hook.hpp). A dry run first enumerates
// the boundaries the scenario passes; then, for each boundary k, a fresh
// delivery is killed at k, recovered, submitted again under the same id,
// and recovered again. At every point: a journalled cancellation is never
// dispatched; the server sees at most one advertisement GET and one POST
// per attempt, and a second POST only as the compare-and-swap the id table
// allows; no outcome claims more than was observed (J2); the second
// recovery changes nothing. Three modes: SQLite with a process crash,
// SQLite with a power cut (the log's unsynced suffix lost,
// fixtures/wal_loss_vfs.hpp), PostgreSQL with a process crash.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "courier/courier.hpp"
#include "failed_checks.hpp"
#include "fixture_server.hpp"
#include "journal/journal.hpp"
#include "journal/step_hook.hpp"
#include "pg_support.hpp"
#include "seat/admission.hpp"
#include "service_support.hpp"
#include "support.hpp"
#include "seat/lane.hpp"
#include "sys/clock.hpp"
#include "sys/flock.hpp"
#include "wal_loss_vfs.hpp"
#include "wire/remote.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_crash_points {

using namespace courier;

namespace {

enum class Mode { sqlite, sqlite_power_cut, postgres };

const char* mode_name(Mode m) {
  return m == Mode::sqlite             ? "SQLite, process crash"
         : m == Mode::sqlite_power_cut ? "SQLite, power cut"
                                       : "PostgreSQL, process crash";
}

struct Scenario {
  const char* name;
  const char* ends;  // how its dry run ends: "outcome KIND EFFECT", as the host says it
  std::int64_t budget_ms;
  bool hold_post;       // the server holds the POST (the revocation, the deadline, the lease come meanwhile)
  bool leases = false;  // only where lanes are leases (PostgreSQL)
};

// Short enough to keep every point quick, long enough for a push to reach
// its POST on a busy machine.
constexpr Scenario kScenarios[] = {
    {"delivered", "outcome delivered applied -", 30'000, false},
    {"rejected", "outcome rejected refused -", 30'000, false},
    {"cancelled", "outcome cancelled_no_dispatch none caller", 30'000, false},
    {"revoked", "outcome revoked possible caller", 30'000, true},
    {"deadline-before", "outcome deadline_killed none -", 2'500, false},
    {"deadline-after", "outcome deadline_killed possible -", 2'500, true},
    {"transport", "outcome transport_failed none -", 30'000, false},
    {"lease-lost", "outcome revoked possible lease_lost", 30'000, true, true},
};

// PostgreSQL leases (the host has the same): a ttl long enough that a
// renewal on a loaded machine is never late (a lease lost by load would
// change the scenario), a margin that covers a stop's confirmation (reap +
// end of file). A killed holder's lease is expired by the harness instead
// of waited out (expire_leases).
constexpr MonoNs kTtl = 3'000'000'000, kMargin = 1'200'000'000, kBound = 500'000'000;

// The result of one run of the host: the boundaries it passed, and whether
// it died at the last of them.
struct HostRun {
  std::vector<std::string> points;
  bool killed = false;
  std::string out;
};

bool exited(pid_t pid) {
  siginfo_t si{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(test::read_file(path));
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

struct Harness {
  Mode mode;
  test::TempDir dir;
  test::FixtureServer server;
  // The PostgreSQL mode's database, one per worker: a recovery finishes
  // every delivery of its host whose submitter is gone, so workers sharing
  // one would finish each other's.
  std::optional<std::string> pg;
  std::string source, tip;
  int runs = 0;

  Harness(Mode m, std::optional<std::string> pg_url) : mode(m), pg(std::move(pg_url)) {
    source = dir.path() + "/source";
    tip = test::make_source_repo(source, 2);
  }

  // One run's private places: its journal (SQLite), lanes and repository.
  struct Run {
    std::string name, id, state, lanes, points, repo;
  };

  Run fresh(const Scenario& s, long k) {
    Run r;
    r.name = std::string(s.name) + "-" + std::to_string(k) + "-" + std::to_string(++runs);
    r.id = r.name;
    const std::string home = dir.path() + "/" + r.name;
    REQUIRE(::mkdir(home.c_str(), 0700) == 0);
    r.state = pg ? *pg : home + "/state/journal.sqlite";
    r.lanes = home + "/lanes";
    r.points = home + "/points";
    r.repo = server.create_bare_repo(r.name);
    if (std::string(s.name) == "rejected") {
      test::write_file(r.repo + "/hooks/pre-receive", "#!/bin/sh\necho 'the buyer refuses' >&2\nexit 1\n");
      REQUIRE(::chmod((r.repo + "/hooks/pre-receive").c_str(), 0755) == 0);
    }
    return r;
  }

  void arm(const Scenario& s, const Run& r) {
    if (s.hold_post) server.hold(test::RequestMatch::next("POST", "/" + r.name + ".git/git-receive-pack"));
    if (std::string(s.name) == "transport")
      server.respond(test::RequestMatch::next("GET", "/" + r.name + ".git/info/refs"), 500);
  }

  // Runs the host to its end (or its kill at boundary `crash_at`).
  HostRun host(const Scenario& s, const Run& r, long crash_at) {
    std::vector<std::string> argv = {COURIER_CRASH_HOST,
                                     r.state,
                                     r.lanes,
                                     source,
                                     server.url(r.name),
                                     server.ca_file(),
                                     r.id,
                                     tip,
                                     std::to_string(s.budget_ms),
                                     s.name,
                                     std::to_string(crash_at),
                                     r.points,
                                     COURIER_BINARY};
    if (mode == Mode::sqlite_power_cut) argv.push_back("wal-loss");
    test::LineProcess p(argv);
    if (s.hold_post) {
      // The POST held (or the host gone first): the revocation's moment.
      while (!server.wait_for_held(50).has_value() && !exited(p.pid())) {
      }
      if (std::string(s.name) == "revoked") test::write_file(r.points + ".revoke", "");
      if (s.leases && !exited(p.pid())) expire_leases();
    }
    HostRun out;
    out.killed = p.wait_exit() == -1;
    // The rules this run armed go (a POST already held stays held until
    // settle(): the killed host's child, if alive, waits there).
    server.reset_faults();
    for (const auto& l : p.lines()) out.out += l + "\n";
    out.points = lines_of(r.points);
    return out;
  }

  // Takes the lanes' leases away, as the database's clock would after a
  // partition: the holder's next renewal finds it lost (L1).
  void expire_leases() const {
    const auto out =
        test::run({std::string(test::PgCluster::kBinDir) + "/psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d",
                   *pg, "-c", "UPDATE courier_lease SET expires_at = now() - interval '1 hour' WHERE NOT released"});
    REQUIRE_MESSAGE(out.exit_code == 0, out.err);
  }

  // Lets go of what the server holds, and forgets its announcements: the
  // next run starts from a server that holds nothing.
  void settle() {
    server.release();
    while (server.wait_for_held(0).has_value()) {
    }
  }

  // Waits until no process holds the run's lane: the killed host's child
  // holds it too (S6) until it sees its parent gone and exits, and recovery
  // never touches a held lane (J3). Bounded by a stop's confirmation.
  void wait_lane_free(const Run& r) const {
    auto lanes = sys::LaneDir::open(r.lanes);
    if (!lanes) return;  // killed before the lane directory was made: nothing holds it
    auto lock = sys::LockFile::open(*lanes, seat::lane_lock_name(*wire::lane_key(server.url(r.name))));
    REQUIRE_MESSAGE(lock.has_value(), (lock ? "" : lock.error().message));
    const long bound_ms = static_cast<long>((kReapBound + kEofBound) / sys::kNsPerMs);
    REQUIRE_MESSAGE(test::wait_for_fact([&] { return lock->try_lock().value_or(false); }, bound_ms, 2'000),
                    "the killed host's child still holds the lane");
    lock->unlock();
    // The lock goes with the child's descriptors, a moment before the child
    // itself is gone: a recovery in that moment finds it still running, and
    // (this process not being git-courier, J3) cannot prove it a delivery
    // child to stop it. The child the journal names is waited out too.
    const auto rec = record(r);
    const auto dispatched = rec ? rec->last(journal::Step::dispatched) : std::nullopt;
    if (!dispatched) return;
    journal::ProcessIdentity child;
    child.pid = std::atoll(journal::detail_text(dispatched->detail, "child_pid").c_str());
    child.start_ticks =
        std::strtoull(journal::detail_text(dispatched->detail, "child_start_ticks").c_str(), nullptr, 10);
    child.boot_id = journal::detail_text(dispatched->detail, "child_boot_id");
    REQUIRE_MESSAGE(test::wait_for_fact([&] { return !journal::is_alive(child); }, bound_ms, 2'000),
                    "the killed host's child is still running after it let go of the lane");
  }

  ExecutorOptions recovering(const Run& r) const {
    ExecutorOptions o;
    (pg ? o.state : o.journal) = r.state;
    o.lane_dir = r.lanes;
    o.child_program = COURIER_BINARY;
    o.cgroup = CgroupMode::off;
    o.host_id = "crash-host";
    o.on_child_stderr = [](std::string_view) {};
    o.on_log = [](std::string_view) {};
    if (pg) {
      o.lease_ttl = kTtl;
      o.lease_margin = kMargin;
      o.reap_bound = kBound;
      o.eof_bound = kBound;
    }
    return o;
  }

  DeliveryRequest again(const Scenario& s, const Run& r) const {
    DeliveryRequest q;
    q.id = r.id;
    q.repo = source;
    q.remote = server.url(r.name);
    q.ref = "refs/heads/main";
    q.oid = tip;
    q.ca_file = server.ca_file();
    q.budget = std::chrono::milliseconds(s.budget_ms);
    return q;
  }

  // The delivery as the journal has it now, through a connection of our
  // own (nullopt: the id is unknown to it).
  std::optional<journal::Record> record(const Run& r) const {
    auto j = pg ? journal::open_postgres(*state::parse_state_url(r.state), "git-courier/crash-harness/read")
                : journal::open_sqlite(r.state);
    REQUIRE_MESSAGE(j.has_value(), (j ? "" : j.error().message));
    auto rec = (*j)->find(r.id);
    REQUIRE_MESSAGE(rec.has_value(), (rec ? "" : rec.error().message));
    return *rec;
  }

  long count(const std::string& method, const Run& r, const std::string& path) {
    return server.count().count(method + " /" + r.name + ".git/" + path);
  }
};

}  // namespace

namespace {

// What the journal says of one attempt.
struct Attempt {
  int number = 0;
  bool post_started = false;
  bool cancelled = false;  // a caller's revocation before the claim, journalled
  std::optional<std::string> expect_old;
  std::optional<std::string> answered;  // the remote_effect a report named
  std::optional<Outcome> outcome;
};

std::vector<Attempt> attempts_of(const journal::Record& rec) {
  std::vector<Attempt> out;
  for (const auto& e : rec.entries) {
    if (e.step == journal::Step::submitted) {
      out.push_back(Attempt{e.attempt});
      const std::string old = journal::detail_text(e.detail, "expect_old");
      if (!old.empty()) out.back().expect_old = old;
    }
    if (out.empty()) continue;
    Attempt& a = out.back();
    if (e.step == journal::Step::post_started) a.post_started = true;
    if (e.step == journal::Step::answered) a.answered = journal::detail_text(e.detail, "remote_effect");
    if (e.step == journal::Step::revoke_requested && journal::detail_flag(e.detail, "claimed") == false &&
        journal::detail_text(e.detail, "cause") == "caller")
      a.cancelled = true;
    if (e.step == journal::Step::finished) {
      auto o = journal::outcome_from_detail(e.detail);
      if (o) a.outcome = *o;
      if (o && o->kind == OutcomeKind::cancelled_no_dispatch && o->revoked_by == RevokeCause::caller)
        a.cancelled = true;
    }
  }
  return out;
}

// J2: no finished attempt claims more than its journal observed, and the
// server saw no POST an outcome denies.
void check_observed(const std::vector<Attempt>& attempts, long posts, bool ref_moved) {
  long may_have_posted = 0;
  bool may_have_applied = false;
  for (const auto& a : attempts) {
    CAPTURE(a.number);
    REQUIRE_MESSAGE(a.outcome.has_value(), "attempt " << a.number << " was never finished");
    const RemoteEffect fx = a.outcome->remote_effect;
    may_have_posted += a.post_started ? 1 : 0;
    may_have_applied = may_have_applied || fx == RemoteEffect::applied || fx == RemoteEffect::possible;
    if (fx == RemoteEffect::none) CHECK_MESSAGE(!a.post_started, "J2: `none` after post_started");
    if (fx == RemoteEffect::applied || fx == RemoteEffect::refused)
      CHECK_MESSAGE(a.answered == std::optional<std::string>(remote_effect_name(fx)),
                    "J2: " << std::string(remote_effect_name(fx)) << " without a report that said so");
  }
  CHECK_MESSAGE(posts <= may_have_posted, "J2: " << posts << " POST(s) at the server, " << may_have_posted
                                                 << " attempt(s) journalled post_started");
  CHECK_MESSAGE((!ref_moved || may_have_applied), "J2: the remote's ref moved, every outcome denies it");
}

// The id table: one advertisement GET and at most one POST per attempt; a
// later attempt POSTs only as the compare-and-swap after `possible`.
void check_id_table(const std::vector<Attempt>& attempts, long gets, long posts) {
  CHECK_MESSAGE(gets <= static_cast<long>(attempts.size()),
                gets << " advertisement GETs for " << attempts.size() << " attempt(s)");
  CHECK(posts <= static_cast<long>(attempts.size()));
  bool posted_before = false;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const bool again = posted_before && attempts[i].post_started;
    posted_before = posted_before || attempts[i].post_started;
    if (!again) continue;
    CAPTURE(attempts[i].number);
    const auto& before = attempts[i - 1].outcome;
    CHECK_MESSAGE((before && seat::id_table_row(*before, false) == seat::SameIdAgain::Action::compare_and_swap),
                  "a second POST after an attempt the id table does not run again as a compare-and-swap");
    CHECK_MESSAGE(attempts[i].expect_old.has_value(), "a second POST that is not a compare-and-swap");
  }
}

bool same(const std::optional<journal::Record>& a, const std::optional<journal::Record>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->finished != b->finished || a->entries.size() != b->entries.size()) return false;
  for (std::size_t i = 0; i < a->entries.size(); ++i)
    if (a->entries[i].step != b->entries[i].step || a->entries[i].detail != b->entries[i].detail) return false;
  return true;
}

std::string steps_text(const std::optional<journal::Record>& r) {
  if (!r) return "(unknown id)";
  std::string out;
  for (const auto& e : r->entries) out += std::to_string(e.attempt) + ":" + journal::step_name(e.step) + " ";
  return out;
}

// After the crash: recover, recover again (nothing changes), the same id
// again, recover again (nothing changes); then what the server saw.
void recover_and_resubmit(Harness& h, const Scenario& s, const Harness::Run& r) {
  Executor ex(h.recovering(r));
  const auto& at_start = ex.recovered_at_start();
  REQUIRE_MESSAGE(at_start.has_value(), (at_start ? "" : at_start.error().message));
  const auto recovered = h.record(r);
  auto second = ex.recover();
  REQUIRE(second.has_value());
  CHECK_MESSAGE(second->empty(), "a second recovery finished " << second->size() << " more");
  CHECK_MESSAGE(same(recovered, h.record(r)),
                "a second recovery changed the journal: " << steps_text(recovered) << "-> " << steps_text(h.record(r)));
  const bool cancelled = recovered && !attempts_of(*recovered).empty() && attempts_of(*recovered).back().cancelled;
  Outcome o = ex.submit(h.again(s, r)).wait();
  const auto after = h.record(r);
  auto third = ex.recover();
  REQUIRE(third.has_value());
  CHECK_MESSAGE(third->empty(), "a recovery after the resubmission finished " << third->size());
  CHECK_MESSAGE(same(after, h.record(r)), "a recovery after the resubmission changed the journal");
  REQUIRE_MESSAGE(after.has_value(),
                  "the resubmission left no journal: " << std::string(outcome_name(o.kind)) << ": " << o.reason);
  const long gets = h.count("GET", r, "info/refs"), posts = h.count("POST", r, "git-receive-pack");
  if (cancelled) {
    CHECK_MESSAGE(ex.spawned() == 0, "S5: a journalled cancellation was dispatched again");
    CHECK_MESSAGE(gets == 0, "S5: a cancelled delivery reached the server");
    CHECK_MESSAGE(
        o.kind == OutcomeKind::cancelled_no_dispatch,
        "S5: a journalled cancellation was not replayed: " << std::string(outcome_name(o.kind)) << ": " << o.reason);
  }
  const auto attempts = attempts_of(*after);
  CAPTURE(steps_text(after));
  check_id_table(attempts, gets, posts);
  const std::string ref =
      test::git({"--git-dir", h.server.repo_path(r.name), "rev-parse", "-q", "--verify", "refs/heads/main"}).out;
  check_observed(attempts, posts, ref.rfind(h.tip, 0) == 0);
}

// One point: a fresh delivery killed at boundary k, then recovered.
void crash_at(Harness& h, const Scenario& s, long k, const std::vector<std::string>& dry) {
  const auto r = h.fresh(s, k);
  h.arm(s, r);
  const HostRun run = h.host(s, r, k);
  CAPTURE(r.name);
  CAPTURE(dry[static_cast<std::size_t>(k - 1)]);
  // The point fired: the host passed exactly k boundaries, the same as the
  // dry run's first k, and died at the last.
  CHECK_MESSAGE(run.killed, "the host was not killed at point " << k << ": " << run.out);
  REQUIRE(run.points.size() == static_cast<std::size_t>(k));
  CHECK(std::equal(run.points.begin(), run.points.end(), dry.begin()));
  if (h.mode == Mode::sqlite_power_cut) CHECK(test::apply_wal_loss(r.state) >= 0);
  h.wait_lane_free(r);
  // The killed host's lease is let expire at once, as the database's clock
  // would after the ttl: the resubmission then takes the lane without
  // waiting that out.
  if (h.pg) h.expire_leases();
  recover_and_resubmit(h, s, r);
  h.settle();
}

// Thrown out of a scenario once a check of the case has failed.
struct StoppedAtFailure {};

// Every boundary of one scenario: enumerated by a dry run, then each tried.
// Returns how many, and says so.
long every_point(Harness& h, const Scenario& s, std::string& said) {
  if (s.leases && h.mode != Mode::postgres) {
    said = std::string("crash points (") + mode_name(h.mode) + "), " + s.name + ": none (no leases here)";
    return 0;
  }
  const std::string scenario = s.name;
  CAPTURE(scenario);
  const auto r = h.fresh(s, 0);
  h.arm(s, r);
  const HostRun dry = h.host(s, r, 0);
  h.settle();
  REQUIRE_MESSAGE(dry.out == std::string(s.ends) + "\n", "the dry run ended otherwise: " << dry.out);
  REQUIRE_MESSAGE(dry.points.size() >= 4, "the dry run passed " << dry.points.size() << " boundaries: " << dry.out);
  const auto from = sys::mono_now_ns();
  for (long k = 1; k <= static_cast<long>(dry.points.size()); ++k) {
    crash_at(h, s, k, dry.points);
    // The first failure is reported; the rest of the sweep would repeat it.
    if (test::failed_checks() > 0) throw StoppedAtFailure{};
  }
  std::string seq;
  for (const auto& p : dry.points) seq += p + ", ";
  std::ostringstream line;
  line << "crash points (" << mode_name(h.mode) << "), " << s.name << ": " << dry.points.size()
       << " tried, each fired, in " << sys::ns_to_ms(sys::mono_now_ns() - from) << " ms; dry run " << dry.out
       << "boundaries: " << seq;
  said = line.str();
  return static_cast<long>(dry.points.size());
}

// What the workers found, scenario by scenario (nullopt: not reached, or
// stopped by a failed requirement).
struct Tally {
  std::mutex mu;
  std::size_t next = 0;
  std::vector<std::optional<long>> points = std::vector<std::optional<long>>(std::size(kScenarios));
  std::vector<std::string> said = std::vector<std::string>(std::size(kScenarios));
};

// A worker: a server and repositories of its own, scenarios taken in turn.
// The points wait mostly (on children, servers, deadlines), so workers
// overlap them; a failed requirement ends its scenario, not the worker.
void worker(Mode m, std::optional<std::string> pg, Tally& t) {
  try {
    Harness h(m, std::move(pg));
    for (;;) {
      std::size_t i;
      {
        std::lock_guard<std::mutex> lock(t.mu);
        if (test::failed_checks() > 0) return;  // stopped at the first failure
        if ((i = t.next++) >= std::size(kScenarios)) return;
      }
      std::string said;
      try {
        const long n = every_point(h, kScenarios[i], said);
        std::lock_guard<std::mutex> lock(t.mu);
        t.points[i] = n;
        t.said[i] = said;
      } catch (...) {
      }
    }
  } catch (...) {
    FAIL_CHECK("a crash-point worker could not start");
  }
}

constexpr int kWorkers = 4;

void every_scenario(Mode m, const test::PgCluster* pg = nullptr) {
  REQUIRE_MESSAGE(journal::kStepHooks, "this build has no crash points (COURIER_TEST_HOOKS)");
  const auto from = sys::mono_now_ns();
  Tally t;
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    std::optional<std::string> db;
    if (pg) {
      const std::string name = "courier_w" + std::to_string(w);
      pg->sql("CREATE DATABASE " + name);
      db = pg->url().substr(0, pg->url().rfind('/') + 1) + name;
    }
    workers.emplace_back([m, db, &t] { worker(m, db, t); });
  }
  for (auto& w : workers) w.join();
  if (test::failed_checks() > 0) {
    MESSAGE("the sweep stopped at its first failure (reported above)");
    return;
  }
  long total = 0;
  for (std::size_t i = 0; i < std::size(kScenarios); ++i) {
    const std::string scenario = kScenarios[i].name;
    CAPTURE(scenario);
    CHECK_MESSAGE(t.points[i].has_value(), "the scenario was not carried through every point");
    total += t.points[i].value_or(0);
    if (!t.said[i].empty()) MESSAGE(t.said[i]);
  }
  MESSAGE("measured: crash points (" << std::string(mode_name(m)) << "): " << total << " points in "
                                     << sys::ns_to_ms(sys::mono_now_ns() - from) << " ms, " << kWorkers
                                     << " at a time");
}

}  // namespace

TEST_SUITE("crash-points") {
  TEST_CASE(
      "J2 J4 S5: a host killed at every journal step boundary of every scenario (SQLite) sends no second POST "
      "beyond the id table's compare-and-swap and never dispatches a journalled cancellation after recovery; no "
      "outcome claims more than was observed and a second recovery changes nothing") {
    every_scenario(Mode::sqlite);
  }
}

TEST_SUITE("crash-points") {
  TEST_CASE(
      "J1 J2 J4 S5: a host whose power is cut at every journal step boundary of every scenario (SQLite: the log's "
      "unsynced suffix lost) sends no second POST beyond the id table's compare-and-swap and never dispatches a "
      "journalled cancellation after recovery; no outcome claims more than was observed and a second recovery "
      "changes nothing") {
    every_scenario(Mode::sqlite_power_cut);
  }

  TEST_CASE(
      "J2 J4 S5: a host killed at every journal step boundary of every scenario (PostgreSQL) sends no second POST "
      "beyond the id table's compare-and-swap and never dispatches a journalled cancellation after recovery; no "
      "outcome claims more than was observed and a second recovery changes nothing") {
    PG_CLUSTER_OR_SKIP(pg);
    every_scenario(Mode::postgres, &pg);
  }
}

}  // namespace integration_crash_points
