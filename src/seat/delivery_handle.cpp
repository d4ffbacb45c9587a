// delivery_handle.cpp — the caller's view of one delivery: revoke, wait,
// and its state; destroying a live one revokes it (S4).
#include <stdexcept>

#include "seat/delivery_shared.hpp"
#include "seat/executor_core.hpp"

namespace courier {

using enum seat::ClaimWord;

void wake_executor(const DeliveryHandle::Shared& s) {
  if (auto exec = s.exec.lock()) exec->wake_workers();
}

namespace {

// A queued delivery cancelled: it held no seat, so no lane is worth trying
// again; one worker looks, to drop its entry.
void drop_from_queue(const DeliveryHandle::Shared& s) {
  if (auto exec = s.exec.lock()) exec->look_again();
}

}  // namespace

DeliveryHandle& DeliveryHandle::operator=(DeliveryHandle&& o) noexcept {
  if (this != &o) {
    if (s_) revoke("delivery handle replaced");
    s_ = std::move(o.s_);
  }
  return *this;
}

DeliveryHandle::~DeliveryHandle() {
  if (!s_) return;
  bool finished;
  {
    sys::MutexLock lock(s_->mu);
    finished = s_->outcome.has_value();
  }
  // S4: a caller that walks away revokes the work; the seat still follows
  // the confirmed stop, which the executor's worker waits for.
  if (!finished) revoke("the delivery handle was destroyed");
}

std::uint64_t DeliveryHandle::id() const { return s_ ? s_->id : 0; }

RevokeAnswer DeliveryHandle::revoke(const std::string& reason, RevokeCause cause) {
  // A local owner: once finish() runs, a waiter may destroy this handle.
  const std::shared_ptr<Shared> s = s_;
  return revoke_delivery(s, reason, cause);
}

RevokeAnswer DeliveryHandle::withdraw(const std::string& reason, RevokeCause cause) {
  const std::shared_ptr<Shared> s = s_;
  return revoke_delivery(s, reason, cause, false);
}

namespace {

// The first revocation marks the delivery (its instant, cause and words).
// False when it is finished or finishing, or another revocation came first.
enum class Mark { first, repeated, too_late };

Mark mark_revoked(DeliveryHandle::Shared& s, const std::string& reason, RevokeCause cause) {
  sys::MutexLock lock(s.mu);
  // A revocation still deciding may be a withdrawal that finds the delivery
  // claimed and takes its mark back: this one waits to see which.
  while (s.revoke_pending) s.cv.wait(lock);
  if (s.outcome || s.finishing) return Mark::too_late;
  if (s.revoke_ns != 0) return Mark::repeated;
  s.revoke_ns = sys::mono_now_ns();
  s.revoke_reason = reason;
  s.revoke_by = cause;
  s.revoke_pending = true;
  return Mark::first;
}

// A withdrawal that found the delivery claimed: its mark is taken back, as
// if it had never come (no words, no instant, no cause).
void unmark(DeliveryHandle::Shared& s) {
  {
    sys::MutexLock lock(s.mu);
    s.revoke_ns = 0;
    s.revoke_reason.clear();
    s.revoke_by = RevokeCause::caller;
    s.revoke_pending = false;
  }
  s.cv.notify_all();
}

// Every way out of a first revocation lets finish() go on (after the entry).
void entry_decided(DeliveryHandle::Shared& s) {
  {
    sys::MutexLock lock(s.mu);
    s.revoke_pending = false;
  }
  s.cv.notify_all();
}

}  // namespace

RevokeAnswer revoke_delivery(const DeliveryPtr& s, const std::string& reason, RevokeCause cause, bool live) {
  if (!s) return RevokeAnswer::too_late;
  const Mark mark = mark_revoked(*s, reason, cause);
  if (mark == Mark::too_late) return RevokeAnswer::too_late;
  // Only the first revocation acts: it alone moves the claim word, writes
  // the entry and kills (a later one would add nothing but a race).
  if (mark == Mark::repeated) return RevokeAnswer::repeated;
  int expected = kQueued;
  COURIER_CLAIM_MOVE(kQueued, kCancelled);
  if (s->claim.compare_exchange_strong(expected, kCancelled)) {
    // Cancellation won while queued: nothing was, or ever will be,
    // spawned for it, no seat is held, and this call writes its outcome.
    // J1, J5: the revocation is durable before revoke() returns, so neither
    // a restart nor a lost `finished` can run it again.
    s->journal_revocation(reason, cause, false);
    entry_decided(*s);
    s->finish(s->never_dispatched(OutcomeKind::cancelled_no_dispatch, "revoked before dispatch: " + reason));
    drop_from_queue(*s);
    return RevokeAnswer::cancelled;
  }
  expected = kSeated;
  COURIER_CLAIM_MOVE(kSeated, kCancelledSeated);
  if (s->claim.compare_exchange_strong(expected, kCancelledSeated)) {
    // Cancellation won while a worker holds the seat: that worker writes
    // the outcome once the seat is back (J5, S2); the entry goes first.
    s->journal_revocation(reason, cause, false);
    entry_decided(*s);
    wake_executor(*s);  // the seat's worker writes the outcome
    return RevokeAnswer::cancelled;
  }
  if (!live) {
    // Claimed a moment ago: a withdrawal does not stop live work.
    unmark(*s);
    return RevokeAnswer::too_late;
  }
  // Claimed: before the child's result, the revocation decides the outcome
  // (stopping); after it (answered), the child is still stopped, and its
  // result stands.
  expected = kClaimed;
  COURIER_CLAIM_MOVE(kClaimed, kStopping);
  const bool stopping = s->claim.compare_exchange_strong(expected, kStopping);
  if (!stopping && expected != kAnswered) {
    // Expired or refused a moment ago: that outcome stands, nothing to stop.
    entry_decided(*s);
    return RevokeAnswer::too_late;
  }
  // Live: the intent first (J1), then the kill.
  s->revoke_live(reason, cause);
  entry_decided(*s);
  std::shared_ptr<supervisor::Supervisor> sup;
  {
    sys::MutexLock lock(s->mu);
    sup = s->sup;
  }
  // The claim won: kill and confirm (the supervisor handles both). A warm
  // child not yet adopted gets it from adopt() (d->sup is null until then).
  if (sup) sup->revoke(reason, cause);
  return stopping ? RevokeAnswer::stopping : RevokeAnswer::too_late;
}

namespace {

// An empty handle (default-constructed, or moved from) names no delivery:
// asking it about one is the caller's mistake, said loudly, never a crash.
const DeliveryPtr& named(const DeliveryPtr& s, const char* what) {
  if (!s) {
    throw std::logic_error(std::string("DeliveryHandle::") + what +
                           ": this handle is empty (default-constructed or moved from) and names no delivery");
  }
  return s;
}

}  // namespace

Outcome DeliveryHandle::wait() {
  const auto& s = named(s_, "wait");
  sys::MutexLock lock(s->mu);
  while (!s->outcome) s->cv.wait(lock);
  return *s->outcome;
}

std::optional<Outcome> DeliveryHandle::wait_for(std::chrono::milliseconds timeout) {
  const auto& s = named(s_, "wait_for");
  const sys::MonoNs until = sys::mono_after_ms(sys::mono_now_ns(), timeout.count());
  sys::MutexLock lock(s->mu);
  while (!s->outcome && s->cv.wait_until(lock, until)) {
  }
  return s->outcome;
}

DeliveryState DeliveryHandle::state() const {
  const auto& s = named(s_, "state");
  sys::MutexLock lock(s->mu);
  // Revoked while running: `stopping` until the outcome is decided (a
  // withdrawal still deciding whether it acts is not a revocation yet).
  if (s->state == DeliveryState::running && s->revoke_ns != 0 && !s->revoke_pending) return DeliveryState::stopping;
  return s->state;
}

DeliveryEvent DeliveryHandle::last_pending() const {
  const auto& s = named(s_, "last_pending");
  sys::MutexLock lock(s->mu);
  return s->pending;
}

}  // namespace courier
