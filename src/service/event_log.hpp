// event_log.hpp — one delivery's event lines as the service keeps them in
// memory: each line numbered when it is appended (event_numbering.hpp: a
// journalled transition by its entry's ordinal, the others above the last
// one), with its generation, and the readers parked until the next line.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/event_numbering.hpp"

namespace courier::service {

// Not thread-safe: the delivery's lock guards it.
class EventLog {
 public:
  void set_gen(std::string gen) { gen_ = std::move(gen); }

  // A journalled transition's line: seq k * kSeqStep for its entry's
  // ordinal k. Without an ordinal above the last one (0: no journal, or its
  // entry could not be read) it is numbered as a line that is not journalled.
  void transition(nlohmann::json j, std::uint64_t k);
  // A line that is not journalled: numbered above the last journalled one
  // (past kSeqStep - 1 of them a line is dropped: only progress comes so often).
  void push(nlohmann::json j);

  // Whether a line numbered above `seq` is there.
  bool has_after(std::uint64_t seq) const;
  // The text of every line numbered above `seq`; `seq` becomes the last one's.
  std::string take_after(std::uint64_t& seq) const;
  // `wake` is called once, when the next line is appended.
  void on_next(std::function<void()> wake) { wakes_.push_back(std::move(wake)); }

 private:
  void append(nlohmann::json j, std::uint64_t seq);
  std::size_t index_after(std::uint64_t seq) const;

  std::string gen_;               // the generation that numbers the lines
  std::vector<EventLine> lines_;  // seq ascending
  std::uint64_t ordinal_ = 0;     // the last journalled line's entry ordinal (k)
  std::uint64_t above_ = 0;       // lines numbered since it (k * kSeqStep + above_)
  std::vector<std::function<void()>> wakes_;
};

}  // namespace courier::service
