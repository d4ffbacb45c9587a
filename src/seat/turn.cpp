// turn.cpp — a delivery's turn: lease, claim, child, release (S2, S5, L3).
#include "seat/turn.hpp"

#include "seat/executor_core.hpp"

namespace courier::seat {

using supervisor::Supervisor;
using supervisor::SupervisorOptions;

void Turn::start() {
  if (exec_.leases.active()) {
    const LeaseStep step = take_lease();
    if (step == LeaseStep::ended) return;
    if (step == LeaseStep::waiting) {
      exec_.leases.park(std::move(w_));
      return;
    }
  }
  run();
}

// L3: one try for the lane's lease. Ended: the delivery finished without
// one (revoked, deadline) and its seat here is released.
Turn::LeaseStep Turn::take_lease() {
  if (d_->claim.load() != kSeated) {
    end(d_->revoked_before_dispatch());
    return LeaseStep::ended;
  }
  if (sys::mono_now_ns() >= d_->deadline) {
    int expected = kSeated;
    COURIER_CLAIM_MOVE(kSeated, kExpired);
    if (!d_->claim.compare_exchange_strong(expected, kExpired)) {
      end(d_->revoked_before_dispatch());
      return LeaseStep::ended;
    }
    const std::string holder = d_->pending_holder();
    end(d_->never_dispatched(OutcomeKind::deadline_killed, "the deadline passed while waiting for the lane's lease" +
                                                               (holder.empty() ? std::string() : " (" + holder + ")") +
                                                               "; no child was spawned"));
    return LeaseStep::ended;
  }
  return exec_.leases.try_take(w_) ? LeaseStep::taken : LeaseStep::waiting;
}

void Turn::run() {
  const sys::MonoNs seat_at = sys::mono_now_ns();
  DeliveryEvent granted;
  granted.kind = DeliveryEvent::Kind::seat_granted;
  granted.delivery = d_->id;
  d_->emit(granted);  // the witness point: the seat is ours from here

  const SupervisorOptions so = turn_options(exec_, d_);
  std::shared_ptr<WarmSlot> warm_slot = exec_.warm->take();
  auto sup = warm_slot ? warm_slot->sup : std::make_shared<Supervisor>(so);
  {
    // A warm child becomes this delivery's only once assigned: a
    // revocation before that must not cost the spare child its life.
    sys::MutexLock lock(d_->mu);
    d_->sup = warm_slot ? nullptr : sup;
  }
  if (!claim(warm_slot)) return;
  std::optional<Outcome> warm_outcome;
  if (warm_slot) warm_outcome = run_warm(so, sup, std::move(warm_slot));
  // Cold: the supervisor made before the claim, which a revocation after
  // the claim reaches through d->sup.
  Outcome o = warm_outcome ? std::move(*warm_outcome) : sup->run();
  o.timings.submitted = d_->submitted;
  o.timings.seat = seat_at;
  if (o.dispatched) exec_.spawned.fetch_add(1);
  {
    sys::MutexLock lock(d_->mu);
    d_->sup.reset();
  }
  end(std::move(o), sup.get());
}

// The dispatch claim (S5). True: this turn may have a child. False:
// cancellation (or the deadline) won the race, no child was or will be
// spawned, the work provably never started, so the seat went straight
// back and the delivery is finished; a warm child taken for it stays warm.
bool Turn::claim(std::shared_ptr<WarmSlot>& warm_slot) {
  const auto& d = d_;
  int expected = kSeated;
  // D1: a deadline that passed while it waited for its seat is expired
  // here, not claimed: no claimed entry, no child (warm or cold) for it.
  COURIER_CLAIM_MOVE(kSeated, kExpired);
  if (sys::mono_now_ns() >= d->deadline && d->claim.compare_exchange_strong(expected, kExpired)) {
    expected = kExpired;
  }
  COURIER_CLAIM_MOVE(kSeated, kClaimed);
  if (expected != kSeated || !d->claim.compare_exchange_strong(expected, kClaimed)) {
    // Seated: this worker writes the outcome whoever moved the word.
    if (warm_slot) exec_.warm->keep(std::move(warm_slot));
    end(expected == kExpired ? d->never_dispatched(OutcomeKind::deadline_killed, "the deadline passed before dispatch")
                             : d->revoked_before_dispatch());
    return false;
  }
  {
    sys::MutexLock lock(d->mu);
    d->state = DeliveryState::running;
  }
  d->record.claimed(LeaseGate::fence_of(*d));
  exec_.at_point(d, "claimed");
  return true;
}

// Makes `sup` the one a revocation of `d` reaches, and passes on a
// revocation that arrived while `d` had none (S5: at any instant after
// the claim, whatever its words, even none). One still journalling its
// intent kills by itself once done (J1): revoke() reads d->sup after.
static void adopt(const DeliveryPtr& d, const std::shared_ptr<Supervisor>& sup) {
  bool revoked = false;
  std::string reason;
  RevokeCause cause = RevokeCause::caller;
  {
    sys::MutexLock lock(d->mu);
    d->sup = sup;
    revoked = d->revoke_ns != 0 && !d->revoke_pending;
    reason = d->revoke_reason;
    cause = d->revoke_by;
  }
  if (revoked) sup->revoke(reason, cause);
}

// A claimed turn on a warm child: the job is handed to it, and its outcome
// is the turn's. Null when the warm child did not run this delivery
// (revoked before the hand-over, refused the job, or gone before it took
// it): `sup` is then a fresh cold supervisor that a revocation of `d`
// reaches. Spawns the warm child that takes its place in the pool.
std::optional<Outcome> Turn::run_warm(const SupervisorOptions& so, std::shared_ptr<Supervisor>& sup,
                                      std::shared_ptr<WarmSlot> warm_slot) {
  // A revocation that came in after the claim but before the job was
  // handed over: the cold supervisor below ends it without a spawn, and
  // the warm child stays warm for the next delivery.
  if (d_->revoked()) {
    exec_.warm->keep(std::move(warm_slot));
    sup = std::make_shared<Supervisor>(so);
    adopt(d_, sup);
    return std::nullopt;
  }
  std::optional<Outcome> o;
  if (sup->assign(so)) {
    exec_.at_point(d_, "assigned");
    adopt(d_, sup);
    // Its place in the pool is filled now, while it works: the next
    // delivery finds a warm child ready without waiting for this one.
    exec_.warm->start();
    o = warm_slot->outcome.get();
    warm_slot->thread.join();
    // Assigned but gone before it took the job: it never had this
    // delivery, which then gets a cold child like any other.
    if (!o->warm) o.reset();
  } else {
    warm_slot->retire("could not take a job");
    exec_.warm->start();
  }
  if (!o) {
    sup = std::make_shared<Supervisor>(so);
    adopt(d_, sup);
  }
  return o;
}

// The seat first (S2 holds: the stop is confirmed), then the child's
// leftovers, then the outcome: the host hears of it once they are gone.
void Turn::end(Outcome o, Supervisor* ran) {
  exec_.leases.drop(d_, o);
  exec_.end_turn(d_, o);
  if (ran) ran->tidy();
  d_->finish(std::move(o));
}

}  // namespace courier::seat
