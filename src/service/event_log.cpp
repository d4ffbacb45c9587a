// event_log.cpp — one delivery's numbered event lines (see the header).
#include "service/event_log.hpp"

#include <algorithm>

namespace courier::service {

void EventLog::transition(nlohmann::json j, std::uint64_t k) {
  if (k <= ordinal_) {
    push(std::move(j));
    return;
  }
  ordinal_ = k;
  above_ = 0;
  append(std::move(j), ordinal_ * kSeqStep);
}

void EventLog::push(nlohmann::json j) {
  if (above_ + 1 >= kSeqStep) return;
  ++above_;
  append(std::move(j), ordinal_ * kSeqStep + above_);
}

void EventLog::append(nlohmann::json j, std::uint64_t seq) {
  j["seq"] = seq;
  j["gen"] = gen_;
  lines_.push_back(EventLine{seq, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"});
  for (auto& w : wakes_) w();
  wakes_.clear();
}

std::size_t EventLog::index_after(std::uint64_t seq) const {
  const auto it = std::upper_bound(lines_.begin(), lines_.end(), seq,
                                   [](std::uint64_t s, const EventLine& l) { return s < l.seq; });
  return static_cast<std::size_t>(it - lines_.begin());
}

bool EventLog::has_after(std::uint64_t seq) const { return index_after(seq) < lines_.size(); }

std::string EventLog::take_after(std::uint64_t& seq) const {
  std::string text;
  for (std::size_t i = index_after(seq); i < lines_.size(); ++i) {
    text += lines_[i].text;
    seq = lines_[i].seq;
  }
  return text;
}

}  // namespace courier::service
