// metrics.hpp — the service's counters and histograms, and their
// Prometheus text (format 0.0.4, written by hand: a few counters do not need
// a library). Thread-safe.
//
// What is counted is what happened here (X-MET1): a delivery that ran now
// is counted once in git_courier_deliveries_total; an id whose outcome the
// journal replays (J4) ran nothing and is counted in
// git_courier_replays_total only, and feeds no histogram. Every label value
// comes from a closed vocabulary (outcome kinds, remote effects, phases,
// HTTP codes), never from a remote, a lane or a delivery id (X-MET2).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "courier/outcome.hpp"

namespace courier::service {

// What the text reports as gauges, read at scrape time.
struct Gauges {
  std::uint64_t live = 0;         // deliveries not finished
  std::uint64_t queued = 0;       // not yet running (queued or pending on a lane)
  std::uint64_t queue_limit = 0;  // --max-queued: past it a submission gets 429
  std::uint64_t warm_ready = 0;
  std::uint64_t unconfirmed = 0;     // finished with a stop that could not be confirmed (seat retained)
  std::uint64_t poisoned_lanes = 0;  // lanes refused for the life of the process (S3)
};

class Metrics {
 public:
  // The phases git_courier_phase_seconds has a series for, in order: each
  // is the outcome document's `timings` field of the same name.
  static constexpr std::array<std::string_view, 5> kPhases = {"spawn", "advertise", "pack", "upload", "stop_confirm"};
  // Bucket bounds in seconds, shared by both histograms.
  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

  Metrics();
  void api_request(int status);
  // A finished delivery's outcome: counted as a delivery, or as a replay
  // when the journal answered it (Outcome::replayed).
  void delivery_finished(const Outcome& o);
  std::string text(const Gauges& g) const;

 private:
  struct Histogram {
    std::array<std::uint64_t, kBuckets.size()> counts{};
    std::uint64_t count = 0;
    double sum = 0;
    void observe(double seconds);
  };
  void observe_timings(const Outcome& o);

  mutable std::mutex mu_;
  std::map<int, std::uint64_t> api_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> outcomes_;
  std::map<std::string, std::uint64_t> replays_;
  std::uint64_t journal_errors_ = 0;
  std::uint64_t lease_losses_ = 0;
  std::uint64_t deadline_kills_ = 0;
  Histogram lane_wait_;
  std::map<std::string, Histogram> phases_;
};

}  // namespace courier::service
