// early_child.hpp — a delivery child started before its executor
// (courier::start_early_child): a warm child held by the host until an
// executor adopts it (ExecutorOptions::early_child).
#pragma once

#include <memory>

#include "courier/courier.hpp"
#include "seat/warm_pool.hpp"

namespace courier {

class EarlyChild {
 public:
  explicit EarlyChild(std::shared_ptr<seat::WarmSlot> slot) : slot_(std::move(slot)) {}
  EarlyChild(const EarlyChild&) = delete;
  EarlyChild& operator=(const EarlyChild&) = delete;
  // Never adopted: killed, its stop confirmed, its thread joined (S5).
  ~EarlyChild();

  // The child, for an executor to adopt (null once taken).
  std::shared_ptr<seat::WarmSlot> take() { return std::move(slot_); }

 private:
  std::shared_ptr<seat::WarmSlot> slot_;
};

// What a warm child of an executor built with `opt` is spawned with (no
// job yet); `on_event` is its log line sink.
supervisor::SupervisorOptions warm_child_options(const ExecutorOptions& opt,
                                                 std::function<void(std::string_view)> on_event);

}  // namespace courier
