// lease_gate.hpp — the lanes as leases across hosts (L1, L3): with a
// PostgreSQL state, a delivery that has its lane's seat and lock here takes
// the lane's lease before its claim; the lease's fence goes into every mint
// and its bound caps the turn's kill instant.
//
// A lease held elsewhere parks the delivery here (seated, its claim word
// unmoved) and gives its worker back: no wait holds a worker. A worker
// resumes a parked wait when it is due: at its wake-up instant, at an
// announced release, or once the delivery was revoked.
//
// The gate's lock is a leaf: the executor's workers take it under the
// executor's lock, never the other way round. The gate wakes the workers
// through a hook that takes the executor's lock after the gate's is let go.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "courier/courier.hpp"
#include "seat/delivery_shared.hpp"
#include "seat/leases.hpp"
#include "seat/recovery.hpp"
#include "sys/mutex.hpp"

namespace courier::seat {

// A seated delivery waiting for its lane's lease, and when to look again:
// the lease generation it saw, its wake-up instant, and the retry for a
// database that cannot be reached (doubling up to the longest, bounded by
// the deadline).
struct LeaseWait {
  static constexpr sys::MonoNs kFirstRetry = 100 * sys::kNsPerMs;
  static constexpr sys::MonoNs kLongestRetry = 2'000 * sys::kNsPerMs;
  DeliveryPtr d;
  std::uint64_t gen = 0;
  sys::MonoNs wake_at = 0;
  sys::MonoNs retry = kFirstRetry;
};

class LeaseGate {
 public:
  struct Hooks {
    std::function<void()> wake_workers;  // takes the executor's lock
    std::function<void(const std::string&)> log;
  };

  // A PostgreSQL state makes the lanes leases too. Leases that cannot be
  // used are refused (refusal()), and every delivery with them, since a
  // delivery must never run unfenced when leases were asked for.
  // Its connections are made by `connect_until` (a CLOCK_MONOTONIC instant).
  void open(const ExecutorOptions& opt, const std::string& host, const std::string& instance, Hooks hooks,
            sys::MonoNs connect_until);
  bool wanted() const { return wanted_; }
  bool active() const { return keeper_ != nullptr; }
  const std::string& refusal() const { return refusal_; }

  // One try for the lane's lease, which `w.d`'s seat and lock here already
  // cover on this host. True: taken, held and kept renewed. False: held
  // elsewhere or the database cannot be reached; `w` says when to look
  // again and the delivery's pending event says why.
  bool try_take(LeaseWait& w) COURIER_EXCLUDES(mu_);
  void park(LeaseWait w) COURIER_EXCLUDES(mu_);
  // A parked wait that is due, taken out of the list; the earliest
  // wake-up of those left; whether any is parked.
  std::optional<LeaseWait> take_due() COURIER_EXCLUDES(mu_);
  std::optional<sys::MonoNs> earliest_wake() const COURIER_EXCLUDES(mu_);
  bool has_waits() const COURIER_EXCLUDES(mu_);

  // The turn is over: its lease is released when the seat is (the stop is
  // confirmed, S2), and kept renewed for the life of this executor when the
  // seat is retained (the child may still be working on that remote).
  void drop(const DeliveryPtr& d, const Outcome& o) COURIER_EXCLUDES(mu_);

  // The fence this turn's tokens carry and its claim journals (L3): the
  // lane's lease's, unless a test forces one.
  static std::optional<std::int64_t> fence_of(const DeliveryHandle::Shared& d);

  // Recovery asks the database about other hosts and their lanes.
  void recovery_questions(RecoveryOptions& ro);

  // The keeper thread stops (no turn is left to call back into).
  void close();

 private:
  void pending(LeaseWait& w, const Result<std::variant<Lease, LeaseHeld>>& got);
  DeliveryPtr holder(const std::string& lane, std::int64_t fence) COURIER_EXCLUDES(mu_);
  void renewed(const std::string& lane, std::int64_t fence, sys::MonoNs bound);
  void lost(const std::string& lane, std::int64_t fence, const std::string& why);

  Hooks hooks_;
  bool wanted_ = false;
  std::string refusal_;
  mutable sys::Mutex mu_;
  // Bumped at each announced release (parked waits look again).
  std::uint64_t gen_ COURIER_GUARDED_BY(mu_) = 0;
  // The delivery holding each lane's lease here.
  std::map<std::string, std::weak_ptr<DeliveryHandle::Shared>> holders_ COURIER_GUARDED_BY(mu_);
  std::vector<LeaseWait> waits_ COURIER_GUARDED_BY(mu_);
  // Declared last: destroyed first, so its thread (which calls back into
  // this gate) is gone before anything it touches.
  std::unique_ptr<LeaseKeeper> keeper_;
};

}  // namespace courier::seat
