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

// An interval of the monotonic clock in seconds; negative when either end
// is missing (0) or they are out of order: nothing to observe.
double seconds_between(MonoNs from, MonoNs to) {
  if (from == 0 || to == 0 || to < from) return -1;
  return static_cast<double>(to - from) / 1e9;
}

}  // namespace

void Metrics::Histogram::observe(double seconds) {
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++counts[i];
  }
  ++count;
  sum += seconds;
}

// Every phase has its series from the start: the vocabulary is closed, and
// an alert or a dashboard never meets a phase that is not there yet.
Metrics::Metrics() {
  for (auto phase : kPhases) phases_[std::string(phase)];
}

void Metrics::api_request(int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++api_[status];
}

void Metrics::delivery_finished(const Outcome& o) {
  std::lock_guard<std::mutex> lock(mu_);
  if (o.replayed) {
    // J4: the journal answered; nothing ran now, so nothing else is counted.
    ++replays_[outcome_name(o.kind)];
    return;
  }
  ++outcomes_[{outcome_name(o.kind), remote_effect_name(o.remote_effect)}];
  if (!o.journal_error.empty()) ++journal_errors_;
  if (o.revoked_by == RevokeCause::lease_lost) ++lease_losses_;
  if (o.kind == OutcomeKind::deadline_killed) ++deadline_kills_;
  observe_timings(o);
}

// The same intervals as the outcome document's `timings` (report/outcome_json.cpp).
void Metrics::observe_timings(const Outcome& o) {
  const auto& t = o.timings;
  auto observe = [](Histogram& h, double seconds) {
    if (seconds >= 0) h.observe(seconds);
  };
  observe(lane_wait_, seconds_between(t.submitted, t.seat));
  // A child spawned for this turn (a warm child's spawn came before the seat).
  if (t.spawned != 0 && t.spawned >= t.seat) observe(phases_["spawn"], seconds_between(t.seat, t.hello));
  if (o.advertise_ms) phases_["advertise"].observe(static_cast<double>(*o.advertise_ms) / 1e3);
  if (o.pack_ms) phases_["pack"].observe(static_cast<double>(*o.pack_ms) / 1e3);
  if (o.upload_ms) phases_["upload"].observe(static_cast<double>(*o.upload_ms) / 1e3);
  observe(phases_["stop_confirm"], seconds_between(t.kill != 0 ? t.kill : t.exited, t.confirmed));
}

namespace {

void family(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP git_courier_" + name + " " + help + "\n# TYPE git_courier_" + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, std::uint64_t v) {
  out += "git_courier_" + name + " " + std::to_string(v) + "\n";
}

}  // namespace

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
  family(out, "deliveries_total", "counter",
         "Deliveries that ran in this service and finished, by outcome and remote effect (replays are not counted).");
  for (const auto& [key, n] : outcomes_) {
    out += "git_courier_deliveries_total{outcome=\"" + key.first + "\",remote_effect=\"" + key.second + "\"} " +
           std::to_string(n) + "\n";
  }
  family(out, "replays_total", "counter",
         "Submissions answered from the journal with an earlier attempt's outcome (J4): nothing ran.");
  for (const auto& [kind, n] : replays_) {
    out += "git_courier_replays_total{outcome=\"" + kind + "\"} " + std::to_string(n) + "\n";
  }
  family(out, "journal_errors_total", "counter",
         "Deliveries whose journal could not record a transition or the outcome.");
  sample(out, "journal_errors_total", journal_errors_);
  family(out, "lease_losses_total", "counter", "Deliveries stopped because their lane's lease was lost (L1).");
  sample(out, "lease_losses_total", lease_losses_);
  family(out, "deadline_kills_total", "counter", "Deliveries that ended deadline_killed.");
  sample(out, "deadline_kills_total", deadline_kills_);
  family(out, "lane_wait_seconds", "histogram", "Time from submission to the lane's seat.");
  histogram("git_courier_lane_wait_seconds", "", lane_wait_);
  family(out, "phase_seconds", "histogram", "Time of each phase of a delivery, as its outcome's timings say.");
  for (auto phase : kPhases) {
    histogram("git_courier_phase_seconds", "phase=\"" + std::string(phase) + "\"", phases_.at(std::string(phase)));
  }
  auto gauge = [&](const char* name, const char* help, std::uint64_t v) {
    family(out, name, "gauge", help);
    sample(out, name, v);
  };
  gauge("live_deliveries", "Deliveries submitted and not finished.", g.live);
  gauge("queue_depth", "Deliveries waiting to run (queued, or pending on their lane).", g.queued);
  gauge("queue_limit", "The queue depth past which a submission is refused 429 (--max-queued).", g.queue_limit);
  gauge("warm_children_ready", "Children spawned ahead of need and waiting for a job.", g.warm_ready);
  gauge("unconfirmed_children", "Children whose stop could not be confirmed (their seats are retained).",
        g.unconfirmed);
  gauge("poisoned_lanes", "Lanes refused for the life of the process: a stop there could not be confirmed (S3).",
        g.poisoned_lanes);
  family(out, "api_requests_total", "counter", "API requests answered, by status code.");
  for (const auto& [code, n] : api_) {
    out += "git_courier_api_requests_total{code=\"" + std::to_string(code) + "\"} " + std::to_string(n) + "\n";
  }
  return out;
}

}  // namespace courier::service
