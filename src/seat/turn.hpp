// turn.hpp — one delivery's turn on its seat: the lane's lease (with
// leases), the dispatch claim (S5), the child (warm or cold) under its
// supervisor, and the seat's release after the confirmed stop (S2).
//
// A turn runs on a worker thread and ends in one of three ways: the
// delivery finished without a child (revoked or expired while seated, its
// outcome written by this turn), it was parked waiting for its lease (the
// worker goes back to the queue; a later turn resumes it), or its child ran
// and its outcome is the supervisor's.
#pragma once

#include <memory>
#include <optional>

#include "courier/courier.hpp"
#include "seat/delivery_shared.hpp"
#include "seat/lease_gate.hpp"
#include "seat/warm_pool.hpp"
#include "supervisor/supervisor.hpp"

namespace courier::seat {

class Turn {
 public:
  Turn(Executor::Impl& exec, LeaseWait w) : exec_(exec), w_(std::move(w)), d_(w_.d) {}
  // With leases, the lease first: one held elsewhere parks the delivery
  // and frees the worker. Then the turn runs.
  void start();

 private:
  enum class LeaseStep { taken, ended, waiting };
  LeaseStep take_lease();
  void run();
  bool claim(std::shared_ptr<WarmSlot>& warm_slot);
  std::optional<Outcome> run_warm(const supervisor::SupervisorOptions& so, std::shared_ptr<supervisor::Supervisor>& sup,
                                  std::shared_ptr<WarmSlot> warm_slot);
  // The seat goes back (or is retained); then `ran` (the supervisor that
  // ran the child, if any) removes the child's leftovers; then the outcome
  // is published (wait() returns after the release).
  void end(Outcome o, supervisor::Supervisor* ran = nullptr);

  Executor::Impl& exec_;
  LeaseWait w_;
  DeliveryPtr d_;
};

// The supervisor's options for one turn: the delivery's job and deadline
// (D1), the executor's bounds, the host's callbacks, and the lane lock the
// child inherits (S6).
supervisor::SupervisorOptions turn_options(Executor::Impl& exec, const DeliveryPtr& d);

}  // namespace courier::seat
