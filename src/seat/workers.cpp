// workers.cpp — the executor's workers: each takes the next runnable
// delivery (the first queued one whose lane has a free seat here and a lock
// file it can flock, S1) or a parked lease wait that is due, and runs its
// turn; with nothing to do it sleeps on the executor's condition.
#include <algorithm>

#include "seat/executor_core.hpp"
#include "seat/turn.hpp"
#include "supervisor/scratch_area.hpp"

namespace courier {

using enum seat::ClaimWord;

DeliveryPtr Executor::Impl::take_runnable(Events& events, Finished& finished) {
  for (auto it = queue.begin(); it != queue.end();) {
    auto d = *it;
    if (d->claim.load() != kQueued) {
      it = queue.erase(it);
      continue;
    }
    auto lane = lanes.lane_for(d->lane);
    if (!lane) {
      it = queue.erase(it);
      refuse(d, OutcomeKind::failed, "cannot use the lane lock: " + lane.error().message, finished);
      continue;
    }
    seat::Lane& l = **lane;
    if (auto why = lanes.poisoned(d->lane, &l)) {
      it = queue.erase(it);
      refuse(d, OutcomeKind::lane_poisoned, *why, finished);
      continue;
    }
    // A lane found held, that nothing can have let go since, is not tried
    // again (LaneTable::may_have_freed): its later entries wait behind it.
    const DeliveryEvent* held = lanes.known_held(l);
    if (!held && (lanes.try_seat(l) || lanes.watch_held(l))) {
      int queued = kQueued;
      COURIER_CLAIM_MOVE(kQueued, kSeated);
      if (!d->claim.compare_exchange_strong(queued, kSeated)) {
        // Revoked or expired a moment ago: its writer finishes it.
        lanes.give_back(l);
        it = queue.erase(it);
        continue;
      }
      lanes.hold(l, d->id, d->lane);
      it = queue.erase(it);
      return d;
    }
    if (!held) held = &lanes.note_held(l, lanes.pending_event(d->id, l));
    DeliveryEvent e = *held;
    e.delivery = d->id;
    {
      sys::MutexLock lock(d->mu);
      const bool changed =
          d->state != DeliveryState::pending || d->pending.holder != e.holder || d->pending.holder_pid != e.holder_pid;
      d->state = DeliveryState::pending;
      d->pending = e;
      if (changed) events.emplace_back(d, e);
    }
    ++it;
  }
  return nullptr;
}

// Refuses a queued delivery that never claimed (no child, no seat).
// finish() emits host callbacks, so the caller runs it after unlocking.
void Executor::Impl::refuse(const DeliveryPtr& d, OutcomeKind kind, const std::string& why, Finished& finished) {
  int expected = kQueued;
  COURIER_CLAIM_MOVE(kQueued, kRefused);
  if (!d->claim.compare_exchange_strong(expected, kRefused)) return;
  finished.emplace_back(d, d->never_dispatched(kind, why));
}

// Stamps timings.released when the seat goes back: under the lock, so no
// next turn on the lane can be granted it before that instant.
void Executor::Impl::end_turn(const DeliveryPtr& d, Outcome& o) {
  std::optional<std::string> poisoned;
  {
    sys::MutexLock lock(mu);
    poisoned = lanes.end_turn(d->lane, d->id, o);
    if (!poisoned && o.seat() == SeatDisposition::release) o.timings.released = sys::mono_now_ns();
    running.erase(std::remove(running.begin(), running.end(), d), running.end());
    cv.notify_all();
  }
  if (poisoned) log(*poisoned);
}

void Executor::Impl::worker() {
  for (;;) {
    std::optional<seat::LeaseWait> resumed;
    DeliveryPtr d;
    Events events;
    Finished finished;
    {
      sys::MutexLock lock(mu);
      for (;;) {
        resumed = leases.take_due();
        if (resumed) break;
        // A parked lease wait keeps the workers: a revoked one (shutdown
        // revokes them all) is finished by the worker that resumes it.
        if (stopping && queue.empty() && !leases.has_waits()) return;
        d = take_runnable(events, finished);
        if (d) {
          running.push_back(d);
          break;
        }
        if (!events.empty() || !finished.empty()) break;
        // take_runnable may just have dropped the last stale entry: look
        // again before sleeping, or a shutdown notified earlier is lost.
        if (stopping && queue.empty() && !leases.has_waits()) return;
        // Until notified, or until the earliest parked lease wait is due.
        cv.wait_until(lock, leases.earliest_wake().value_or(sys::kForever));
      }
    }
    for (auto& [who, o] : finished) who->finish(std::move(o));
    for (auto& [who, e] : events) who->emit(e);
    if (resumed) {
      seat::Turn(*this, std::move(*resumed)).start();
    } else if (d) {
      seat::Turn(*this, seat::LeaseWait{d}).start();
    }
    // What gone hosts of this user left in the scratch area: swept once the
    // turn's outcome is out, so no deadline pays for it (bounded).
    if (resumed || d) supervisor::sweep_after_delivery();
  }
}

}  // namespace courier
