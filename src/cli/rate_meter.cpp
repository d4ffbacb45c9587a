// rate_meter.cpp — the current rate over the last window (see the header).
#include "cli/rate_meter.hpp"

namespace courier::cli {

void RateMeter::add(sys::MonoNs at, std::uint64_t total) {
  if (!samples_.empty() && (at < samples_.back().at || total < samples_.back().total)) samples_.clear();
  samples_.push_back(Sample{at, total});
  // Keep exactly one sample at or beyond the window's far edge: the base
  // the rate is measured from.
  while (samples_.size() > 2 && samples_[1].at <= at - window_) samples_.pop_front();
}

double RateMeter::rate() const {
  if (samples_.size() < 2) return 0.0;
  const Sample& base = samples_.front();
  const Sample& last = samples_.back();
  if (last.at <= base.at) return 0.0;
  return static_cast<double>(last.total - base.total) * 1e9 / static_cast<double>(last.at - base.at);
}

}  // namespace courier::cli
