// metrics.cpp — counters, histograms and the Prometheus text.
#include "service/metrics.hpp"

#include <cstdio>

namespace courier::service {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

void Metrics::Histogram::observe(double seconds) {
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++counts[i];
  }
  ++count;
  sum += seconds;
}

void Metrics::api_request(int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++api_[status];
}

void Metrics::delivery_finished(const Outcome& o) {
  std::lock_guard<std::mutex> lock(mu_);
  ++outcomes_[{outcome_name(o.kind), remote_effect_name(o.remote_effect)}];
  const auto& t = o.timings;
  if (t.seat != 0 && t.submitted != 0 && t.seat >= t.submitted)
    lane_wait_.observe(static_cast<double>(t.seat - t.submitted) / 1e9);
  if (o.advertise_ms) phases_["advertise"].observe(static_cast<double>(*o.advertise_ms) / 1e3);
  if (o.pack_ms) phases_["pack"].observe(static_cast<double>(*o.pack_ms) / 1e3);
  if (o.upload_ms) phases_["upload"].observe(static_cast<double>(*o.upload_ms) / 1e3);
}

std::string Metrics::text(const Gauges& g) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  auto histogram = [&](const std::string& name, const std::string& labels, const Histogram& h) {
    const std::string sep = labels.empty() ? "" : ",";
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      out += name + "_bucket{" + labels + sep + "le=\"" + number(kBuckets[i]) + "\"} " + std::to_string(h.counts[i]) +
             "\n";
    }
    out += name + "_bucket{" + labels + sep + "le=\"+Inf\"} " + std::to_string(h.count) + "\n";
    const std::string braces = labels.empty() ? "" : "{" + labels + "}";
    out += name + "_sum" + braces + " " + number(h.sum) + "\n";
    out += name + "_count" + braces + " " + std::to_string(h.count) + "\n";
  };
  out += "# HELP git_courier_deliveries_total Deliveries finished, by outcome and remote effect.\n";
  out += "# TYPE git_courier_deliveries_total counter\n";
  for (const auto& [key, n] : outcomes_) {
    out += "git_courier_deliveries_total{outcome=\"" + key.first + "\",remote_effect=\"" + key.second + "\"} " +
           std::to_string(n) + "\n";
  }
  out += "# HELP git_courier_lane_wait_seconds Time from submission to the lane's seat.\n";
  out += "# TYPE git_courier_lane_wait_seconds histogram\n";
  histogram("git_courier_lane_wait_seconds", "", lane_wait_);
  out += "# HELP git_courier_phase_seconds Time of each phase the child measured.\n";
  out += "# TYPE git_courier_phase_seconds histogram\n";
  for (const auto& [phase, h] : phases_) histogram("git_courier_phase_seconds", "phase=\"" + phase + "\"", h);
  auto gauge = [&](const char* name, const char* help, std::uint64_t v) {
    out += std::string("# HELP git_courier_") + name + " " + help + "\n# TYPE git_courier_" + name + " gauge\n";
    out += std::string("git_courier_") + name + " " + std::to_string(v) + "\n";
  };
  gauge("live_deliveries", "Deliveries submitted and not finished.", g.live);
  gauge("queue_depth", "Deliveries waiting to run (queued, or pending on their lane).", g.queued);
  gauge("warm_children_ready", "Children spawned ahead of need and waiting for a job.", g.warm_ready);
  gauge("unconfirmed_children", "Children whose stop could not be confirmed (their seats are retained).",
        g.unconfirmed);
  out += "# HELP git_courier_api_requests_total API requests answered, by status code.\n";
  out += "# TYPE git_courier_api_requests_total counter\n";
  for (const auto& [code, n] : api_) {
    out += "git_courier_api_requests_total{code=\"" + std::to_string(code) + "\"} " + std::to_string(n) + "\n";
  }
  return out;
}

}  // namespace courier::service
