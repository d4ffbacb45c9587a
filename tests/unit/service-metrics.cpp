// service-metrics.cpp — the service's metrics as a pure counter (no
// socket, no executor): outcomes in, Prometheus text out. What is counted
// and what is not (a replay is not a delivery), the counters an alert rates
// (journal errors, lease losses, deadline kills), the phases and the
// gauges. The same metrics from a real service, held to docs/service.md, are
// tests/integration/service-metrics.cpp.
#include <doctest/doctest.h>

#include <string>

#include "service/metrics.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_service_metrics {

using namespace courier;
using courier::service::Gauges;
using courier::service::Metrics;

namespace {

constexpr MonoNs kMs = 1'000'000;

// A delivery that ran: a cold child, 20 ms to its seat, 30 ms to its hello,
// phases the child measured, its exit confirmed 2 ms later.
Outcome ran(OutcomeKind kind, RemoteEffect effect) {
  Outcome o;
  o.kind = kind;
  o.remote_effect = effect;
  o.dispatched = true;
  o.timings.submitted = 1'000 * kMs;
  o.timings.seat = 1'020 * kMs;
  o.timings.spawned = 1'021 * kMs;
  o.timings.hello = 1'050 * kMs;
  o.timings.exited = 1'400 * kMs;
  o.timings.confirmed = 1'402 * kMs;
  o.advertise_ms = 40;
  o.pack_ms = 60;
  o.upload_ms = 80;
  return o;
}

// The value of the sample line that is `series` followed by a space ("" when
// there is none; the text starts with a comment, so every sample follows a
// newline).
std::string value_of(const std::string& text, const std::string& series) {
  const std::string key = "\n" + series + " ";
  std::size_t at = text.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  return text.substr(at, text.find('\n', at) - at);
}

}  // namespace

TEST_SUITE("service-metrics") {
  TEST_CASE("X-MET1: a replayed outcome is counted in replays_total only: no delivery, no histogram, no counter") {
    Metrics m;
    m.delivery_finished(ran(OutcomeKind::delivered, RemoteEffect::applied));
    Outcome replay = ran(OutcomeKind::delivered, RemoteEffect::applied);
    replay.replayed = true;
    replay.journal_error = "an old attempt's journal error";
    m.delivery_finished(replay);
    m.delivery_finished(replay);
    Outcome killed = ran(OutcomeKind::deadline_killed, RemoteEffect::possible);
    killed.replayed = true;
    m.delivery_finished(killed);
    const std::string t = m.text(Gauges{});
    CHECK_MESSAGE(value_of(t, R"(git_courier_deliveries_total{outcome="delivered",remote_effect="applied"})") == "1",
                  "a replay was counted as a delivery:\n"
                      << t);
    CHECK(value_of(t, R"(git_courier_replays_total{outcome="delivered"})") == "2");
    CHECK(value_of(t, R"(git_courier_replays_total{outcome="deadline_killed"})") == "1");
    CHECK(t.find("deadline_killed\",remote_effect") == std::string::npos);
    CHECK(value_of(t, "git_courier_deadline_kills_total") == "0");
    CHECK(value_of(t, "git_courier_journal_errors_total") == "0");
    CHECK(value_of(t, "git_courier_lane_wait_seconds_count") == "1");
    CHECK(value_of(t, R"(git_courier_phase_seconds_count{phase="upload"})") == "1");
  }

  TEST_CASE("X-MET1: journal errors, lease losses and deadline kills are counted once per delivery that had them") {
    Metrics m;
    Outcome lost = ran(OutcomeKind::revoked, RemoteEffect::possible);
    lost.revoked_by = RevokeCause::lease_lost;
    lost.revoke_cause = "lease_lost: the renewal found the lease gone";
    m.delivery_finished(lost);
    Outcome by_caller = ran(OutcomeKind::revoked, RemoteEffect::none);
    by_caller.revoked_by = RevokeCause::caller;
    m.delivery_finished(by_caller);
    Outcome unjournalled = ran(OutcomeKind::failed, RemoteEffect::none);
    unjournalled.journal_error = "journal /x: disk full";
    m.delivery_finished(unjournalled);
    m.delivery_finished(ran(OutcomeKind::deadline_killed, RemoteEffect::none));
    m.delivery_finished(ran(OutcomeKind::deadline_killed, RemoteEffect::possible));
    const std::string t = m.text(Gauges{});
    CHECK(value_of(t, "git_courier_lease_losses_total") == "1");
    CHECK(value_of(t, "git_courier_journal_errors_total") == "1");
    CHECK(value_of(t, "git_courier_deadline_kills_total") == "2");
    CHECK(value_of(t, R"(git_courier_deliveries_total{outcome="revoked",remote_effect="possible"})") == "1");
  }

  TEST_CASE(
      "X-MET2: every phase has its series from the start; spawn and stop_confirm are observed as the timings say") {
    Metrics m;
    const std::string empty = m.text(Gauges{});
    for (auto phase : Metrics::kPhases) {
      CHECK(value_of(empty, "git_courier_phase_seconds_count{phase=\"" + std::string(phase) + "\"}") == "0");
    }
    m.delivery_finished(ran(OutcomeKind::delivered, RemoteEffect::applied));
    Outcome warm = ran(OutcomeKind::delivered, RemoteEffect::applied);
    warm.timings.spawned = 500 * kMs;  // spawned ahead of need: no spawn wait in this turn
    warm.timings.hello = 501 * kMs;
    warm.timings.kill = 1'300 * kMs;  // killed: the stop counts from the kill
    m.delivery_finished(warm);
    const std::string t = m.text(Gauges{});
    CHECK(value_of(t, R"(git_courier_phase_seconds_count{phase="spawn"})") == "1");
    CHECK(value_of(t, R"(git_courier_phase_seconds_sum{phase="spawn"})") == "0.03");
    CHECK(value_of(t, R"(git_courier_phase_seconds_count{phase="stop_confirm"})") == "2");
    CHECK(value_of(t, R"(git_courier_phase_seconds_sum{phase="stop_confirm"})") == "0.104");
    CHECK(value_of(t, R"(git_courier_phase_seconds_sum{phase="pack"})") == "0.12");
    CHECK(value_of(t, R"(git_courier_lane_wait_seconds_bucket{le="0.025"})") == "2");
    CHECK(value_of(t, R"(git_courier_lane_wait_seconds_bucket{le="0.01"})") == "0");
  }

  TEST_CASE("X-MET2: the gauges an alert reads: queue depth and limit, unconfirmed children, poisoned lanes") {
    Metrics m;
    Gauges g;
    g.queued = 7;
    g.queue_limit = 8;
    g.unconfirmed = 1;
    g.poisoned_lanes = 2;
    const std::string t = m.text(g);
    CHECK(value_of(t, "git_courier_queue_depth") == "7");
    CHECK(value_of(t, "git_courier_queue_limit") == "8");
    CHECK(value_of(t, "git_courier_unconfirmed_children") == "1");
    CHECK(value_of(t, "git_courier_poisoned_lanes") == "2");
    CHECK(t.find("# TYPE git_courier_poisoned_lanes gauge\n") != std::string::npos);
  }
}

}  // namespace unit_service_metrics
