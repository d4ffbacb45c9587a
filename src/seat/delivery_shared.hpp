// delivery_shared.hpp — one delivery as the executor, its worker, the
// child's supervisor and the caller's handle all see it: the request, the
// dispatch claim word, and the outcome that is written once.
//
// The claim word (S5, J5) decides who writes the outcome. Queued: waiting
// for a seat; seated: a worker holds the seat and has not claimed yet.
// Whoever moves the word out of queued by a compare-and-swap writes the
// outcome (the revoker, the scheduler, the refusing worker); out of seated,
// the seat's worker always writes it, after the seat is released (a
// revocation there only marks the word), so wait() never returns while the
// seat is still held. Out of claimed, one compare-and-swap decides between
// the child's result (answered: it may decide the outcome) and a
// revocation (stopping: the outcome is not the child's result), so
// revoke() can say which came first. The word and its moves are the
// lifecycle's (seat/lifecycle.hpp): each compare-and-swap is asserted a row
// of seat::kClaimMoves where it is made (COURIER_CLAIM_MOVE).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "courier/courier.hpp"
#include "seat/delivery_record.hpp"
#include "seat/leases.hpp"
#include "seat/lifecycle.hpp"
#include "supervisor/lease_bound.hpp"
#include "supervisor/supervisor.hpp"
#include "sys/clock.hpp"
#include "sys/mutex.hpp"
#include "wire/proxy.hpp"

#define COURIER_CLAIM_MOVE(from, to) \
  static_assert(seat::claim_move_allowed(from, to), "a claim word move the lifecycle table does not list")

namespace courier {

struct DeliveryHandle::Shared {
  std::uint64_t id = 0;
  // Its id, attempt and transitions in the journal (none when it was not
  // admitted to one). Locked by itself.
  seat::DeliveryRecord record;
  // Fixed before the delivery is queued, read-only after.
  DeliveryRequest req;
  std::string lane;
  std::string remote;                // canonical: no user information, one spelling
  std::optional<wire::Proxy> proxy;  // the request's proxy, read once (its credentials stay here)
  // The request's updates as validate() read them (one or more), and
  // whether they move together (CheckedRequest::atomic). A compare-and-swap
  // re-delivery (J4) sets each one's expect_old from the journal.
  std::vector<RefUpdate> updates;
  bool atomic = false;
  bool redelivery = false;
  bool engine_automatic = false;  // the host asked for PackEngine::automatic (the job's pack_auto)
  sys::MonoNs submitted = 0;
  sys::MonoNs deadline = 0;
  // The deadline as the journal records it (wall clock, ms since the epoch):
  // the request's own when it gave one, so a resubmission keeps it exactly.
  std::int64_t deadline_unix_ms = 0;
  // Admitted as the next attempt of one interrupted before its claim (J4).
  bool resumed = false;
  std::weak_ptr<Executor::Impl> exec;
  // Across hosts: the lane's lease while this delivery holds it (L3), and
  // the bound its kill instant is capped by (L1), moved by each renewal.
  // Written by the seat's worker before the lease is published to the
  // lease gate's holders (under its lock), read after.
  std::optional<seat::Lease> lease;
  std::shared_ptr<supervisor::LeaseBound> lease_bound;
  std::atomic<int> claim{seat::kQueued};

  mutable sys::Mutex mu;
  sys::CondVar cv;
  DeliveryState state COURIER_GUARDED_BY(mu) = DeliveryState::queued;
  std::optional<Outcome> outcome COURIER_GUARDED_BY(mu);
  std::shared_ptr<supervisor::Supervisor> sup COURIER_GUARDED_BY(mu);  // set before the claim is attempted
  std::string revoke_reason COURIER_GUARDED_BY(mu);
  RevokeCause revoke_by COURIER_GUARDED_BY(mu) = RevokeCause::caller;
  sys::MonoNs revoke_ns COURIER_GUARDED_BY(mu) = 0;
  // J1: the revocation's journal entry, written on a thread of its own when
  // the kill may not wait for it; joined before `finished` is written, so
  // a late entry still comes first.
  std::thread revoke_writer COURIER_GUARDED_BY(mu);
  bool revoke_unjournalled COURIER_GUARDED_BY(mu) = false;
  sys::MonoNs revoke_journalled_ns COURIER_GUARDED_BY(mu) = 0;  // its entry was taken (durable)
  // The first revocation is still deciding what it writes; its entry (when
  // it has one) must precede `finished`, whoever writes that.
  bool revoke_pending COURIER_GUARDED_BY(mu) = false;
  bool finishing COURIER_GUARDED_BY(mu) = false;  // finish() has begun (one writer)
  DeliveryEvent pending COURIER_GUARDED_BY(mu);

  ~Shared();

  void emit(const DeliveryEvent& e) const {
    if (req.on_event) req.on_event(e);
  }

  // Publishes the final outcome once; wakes every waiter. Only the writer
  // the claim word names calls it (J5); a second call is a defect, logged
  // and ignored, never a second `finished` entry.
  void finish(Outcome o) COURIER_EXCLUDES(mu);

  // J1: a live revocation's intent is durable before its kill (see the
  // definition); a lost lease's kill waits for nothing (L1).
  void revoke_live(const std::string& reason, RevokeCause cause) COURIER_EXCLUDES(mu);

  // J1, J5: authority said no, and the supervisor kills once this returns.
  void authority_revoked(const std::string& words) COURIER_EXCLUDES(mu);

  // The revoke_requested entry (durable), and when it was taken.
  void journal_revocation(const std::string& reason, RevokeCause cause, bool claimed) COURIER_EXCLUDES(mu);

  // The outcome of a delivery that never had a child, with its revocation
  // (when there was one) as it stands now.
  Outcome never_dispatched(OutcomeKind kind, std::string reason) const COURIER_EXCLUDES(mu);
  // The same for one revoked before its claim: cancelled_no_dispatch, in
  // the revocation's words.
  Outcome revoked_before_dispatch() const COURIER_EXCLUDES(mu);
  // Whether it was revoked, and how, read under its lock.
  bool revoked() const COURIER_EXCLUDES(mu);
  std::string pending_holder() const COURIER_EXCLUDES(mu);
};

using DeliveryPtr = std::shared_ptr<DeliveryHandle::Shared>;

// DeliveryHandle::revoke for whoever holds the delivery itself (the lease
// gate on a lost lease, the executor at shutdown): the same answer.
// `live`: a claimed delivery is stopped too; without it (a withdrawal)
// only a delivery not yet claimed is revoked, and a claimed one is left
// exactly as it was (too_late).
RevokeAnswer revoke_delivery(const DeliveryPtr& s, const std::string& reason, RevokeCause cause, bool live = true);

// Wakes the executor's workers: the delivery's claim word moved (a worker
// waiting on its lease, or for a free queue, looks again).
void wake_executor(const DeliveryHandle::Shared& s);

}  // namespace courier
