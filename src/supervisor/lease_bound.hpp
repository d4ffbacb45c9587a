// lease_bound.hpp — the lane's lease bound (L1): the CLOCK_MONOTONIC instant
// past which this host may no longer be the lane's holder (the last
// confirmed renewal's send time + ttl - margin). The lease keeper moves it
// later after each confirmed renewal; one supervisor kills its child at
// min(deadline, lease bound) and tells the child each new bound (L2).
//
// Thread-safe. Listeners are told of every move; they run under the
// bound's lock on the mover's thread, so they must only signal (an
// eventfd write): the killer and the drive loop re-read get() themselves.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "sys/clock.hpp"

namespace courier::supervisor {

class LeaseBound {
 public:
  explicit LeaseBound(sys::MonoNs initial) : bound_(initial) {}
  LeaseBound(const LeaseBound&) = delete;
  LeaseBound& operator=(const LeaseBound&) = delete;

  sys::MonoNs get() const;
  // Moves the bound to `later`; ignored unless it is later than the bound
  // now (a bound never moves earlier: a renewal confirmed out of order
  // cannot shorten what an earlier one granted). Wakes the listeners.
  void move_to(sys::MonoNs later);

  using Listener = std::function<void()>;
  // Registers a listener; the id removes it. After unlisten() returns, the
  // listener is not running and will not run again.
  std::uint64_t listen(Listener listener);
  void unlisten(std::uint64_t id);

 private:
  mutable std::mutex mu_;
  sys::MonoNs bound_;
  std::uint64_t next_id_ = 1;
  std::vector<std::pair<std::uint64_t, Listener>> listeners_;
};

// A listener registration for as long as this object lives.
class LeaseListener {
 public:
  LeaseListener() = default;
  LeaseListener(std::shared_ptr<LeaseBound> bound, LeaseBound::Listener listener);
  ~LeaseListener();
  LeaseListener(LeaseListener&& other) noexcept;
  LeaseListener& operator=(LeaseListener&& other) noexcept;
  LeaseListener(const LeaseListener&) = delete;
  LeaseListener& operator=(const LeaseListener&) = delete;

 private:
  void reset();
  std::shared_ptr<LeaseBound> bound_;
  std::uint64_t id_ = 0;
};

// The instant the parent kills the child at (L1): the deadline (D1), or the
// lease bound when there is one and it comes first. The deadline is never
// moved: a bound later than it changes nothing. `lease_kill` false (tests
// only) leaves the lease to the child's own timer (L2).
sys::MonoNs kill_instant(sys::MonoNs deadline, const LeaseBound* lease, bool lease_kill = true);

// Whether a kill at `now` is the lease's (its bound passed, before the
// deadline) rather than the deadline's.
bool kill_is_lease(sys::MonoNs now, sys::MonoNs deadline, const LeaseBound* lease, bool lease_kill = true);

}  // namespace courier::supervisor
