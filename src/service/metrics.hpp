// metrics.hpp — the service's counters and histograms, and their
// Prometheus text (format 0.0.4, written by hand: a few counters do not need
// a library). Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "courier/outcome.hpp"

namespace courier::service {

// What the text reports as gauges, read at scrape time.
struct Gauges {
  std::uint64_t live = 0;    // deliveries not finished
  std::uint64_t queued = 0;  // not yet running (queued or pending on a lane)
  std::uint64_t warm_ready = 0;
  std::uint64_t unconfirmed = 0;  // finished with a stop that could not be confirmed (seat retained)
};

class Metrics {
 public:
  void api_request(int status);
  void delivery_finished(const Outcome& o);
  std::string text(const Gauges& g) const;

  // Bucket bounds in seconds, shared by both histograms.
  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

 private:
  struct Histogram {
    std::array<std::uint64_t, kBuckets.size()> counts{};
    std::uint64_t count = 0;
    double sum = 0;
    void observe(double seconds);
  };
  mutable std::mutex mu_;
  std::map<int, std::uint64_t> api_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> outcomes_;
  Histogram lane_wait_;
  std::map<std::string, Histogram> phases_;
};

}  // namespace courier::service
