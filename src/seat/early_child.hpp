// early_child.hpp — a delivery child started before its executor
// (courier::start_early_child): a warm child held by the host until an
// executor adopts it (ExecutorOptions::early_child).
#pragma once

#include <functional>
#include <memory>

#include "courier/courier.hpp"
#include "seat/warm_pool.hpp"

namespace courier {

class EarlyChild {
 public:
  // `settle` waits (bounded) until the child exists, or never will.
  EarlyChild(std::shared_ptr<seat::WarmSlot> slot, std::function<void()> settle)
      : slot_(std::move(slot)), settle_(std::move(settle)) {}
  EarlyChild(const EarlyChild&) = delete;
  EarlyChild& operator=(const EarlyChild&) = delete;
  // Never adopted: once its spawn is settled, killed, its stop confirmed,
  // its thread joined (S5).
  ~EarlyChild();

  // The child, for an executor to adopt, once its spawn is settled (from
  // then on a job can be assigned to it); null once taken.
  std::shared_ptr<seat::WarmSlot> take();

 private:
  std::shared_ptr<seat::WarmSlot> slot_;
  std::function<void()> settle_;
};

// What a warm child of an executor built with `opt` is spawned with (no
// job yet); `on_event` is its log line sink.
supervisor::SupervisorOptions warm_child_options(const ExecutorOptions& opt,
                                                 std::function<void(std::string_view)> on_event);

}  // namespace courier
