// submission.cpp — a validated request becomes a delivery: its deadline
// fixed (D1), admitted to the journal under its id (J1, J4), and queued; or
// finished here, with the reason (validate()'s refusal among them), before
// any seat, claim or child.
#include <algorithm>

#include "courier/host_api.hpp"
#include "seat/admission.hpp"
#include "seat/executor_core.hpp"
#include "seat/pack_engine.hpp"
#include "seat/state_journal.hpp"

namespace courier {

using enum seat::ClaimWord;

namespace {

// D1: one absolute instant, fixed now. An absolute deadline is carried
// over to the monotonic clock once; a budget counts from now.
void fix_deadline(DeliveryHandle::Shared& d, const DeliveryRequest& request) {
  d.submitted = sys::mono_now_ns();
  const std::int64_t wall_now = journal::wall_now_ms();
  std::int64_t budget_ms = static_cast<std::int64_t>(request.budget.count());
  if (request.deadline_unix_ms && __builtin_sub_overflow(*request.deadline_unix_ms, wall_now, &budget_ms)) {
    budget_ms = *request.deadline_unix_ms < 0 ? 0 : INT64_MAX;  // absurd either way: past, or never
  }
  d.deadline = sys::mono_after_ms(d.submitted, budget_ms);
  if (request.deadline_unix_ms) {
    d.deadline_unix_ms = *request.deadline_unix_ms;
  } else if (__builtin_add_overflow(wall_now, budget_ms, &d.deadline_unix_ms)) {
    d.deadline_unix_ms = INT64_MAX;
  }
}

// Ends a delivery that never claimed: refused before anything ran.
void refuse_now(const DeliveryPtr& d, OutcomeKind kind, const std::string& why) {
  d->claim = kRefused;
  d->finish(d->never_dispatched(kind, why));
}

}  // namespace

void Executor::Impl::submit(const DeliveryPtr& d, const std::optional<std::string>& refused) {
  fix_deadline(*d, d->req);
  // The request's own checks were validate()'s (H2, T1): the lane, the
  // canonical remote and the proxy come read; a refusal ends it here.
  if (refused) return refuse_now(d, OutcomeKind::failed, *refused);
  if (leases.wanted() && !leases.active()) return refuse_now(d, OutcomeKind::failed, leases.refusal());
  if (!admit(d)) return;
  if (expired_at_submit(d)) return;
  d->engine_automatic = d->req.pack_engine == PackEngine::automatic;
  if (auto engine = seat::resolve_pack_engine(d->req); !engine) {
    return refuse_now(d, OutcomeKind::failed, engine.error().message);
  }
  std::optional<std::string> poisoned;
  {
    sys::MutexLock lock(mu);
    poisoned = lanes.poisoned(d->lane, lanes.find(d->lane));
    if (!poisoned) {
      queue.push_back(d);
      // One delivery more can make one worker busy: one idle worker looks
      // (each look scans the queue; waking every worker for one entry made
      // a submission cost a scan per worker).
      cv.notify_one();
    }
  }
  if (poisoned) return refuse_now(d, OutcomeKind::lane_poisoned, *poisoned);
  scheduler.wake();
}

// J1, J4: the delivery's id, and its admission to the journal (durable
// before anything runs). False when it finished here (replayed or refused).
bool Executor::Impl::admit(const DeliveryPtr& d) {
  d->record.set_id(d->req.id.empty() ? seat::new_delivery_id() : d->req.id);
  if (!seat::wants_journal(opt)) return true;
  if (!journal) {
    refuse_now(d, OutcomeKind::failed, "the journal cannot be used: " + journal_refusal);
    return false;
  }
  journal::Submission sub;
  sub.id = d->record.id();
  sub.repo = d->req.repo;
  sub.remote = d->remote;
  sub.lane = d->lane;
  // The whole set as asked (J4's identity); the row's ref/oid/expect_old
  // are the first update's.
  sub.updates = d->updates;
  sub.atomic = d->atomic;
  sub.push_options = d->req.push_options;
  if (!d->updates.empty()) {
    sub.ref = d->updates.front().ref;
    sub.oid = d->updates.front().oid;
    sub.expect_old = d->updates.front().expect_old;
  }
  sub.deadline_unix_ms = d->deadline_unix_ms;
  sub.submitter = self;
  sub.host = seat::host_id_of(opt);
  // The host's note: a JSON object, or nothing is journalled.
  auto note = journal::compact_note(d->req.journal_note, kMaxJournalNote);
  if (!note) {
    refuse_now(d, OutcomeKind::failed, note.error().message);
    return false;
  }
  sub.note = std::move(*note);
  seat::Admission a = seat::admit(*journal, sub);
  d->claim = a.verdict == seat::Admission::Verdict::run ? kQueued : kRefused;
  if (a.verdict == seat::Admission::Verdict::replay) {
    d->record.set_attempt(a.recorded.attempt);
    d->finish(std::move(a.recorded));
    return false;
  }
  if (a.verdict == seat::Admission::Verdict::refuse) {
    d->finish(d->never_dispatched(OutcomeKind::failed, a.why));
    return false;
  }
  if (!a.compare_and_swap.empty()) {
    // J4: a lease on each sent ref's journalled old id. Its move from there
    // was allowed when the first attempt was cleared for its POST
    // (fast-forward checked, or forced), so the fast-forward rules are not
    // asked again: a forced first attempt must be able to finish too. A
    // ref whose command was not sent keeps its own rule.
    for (RefUpdate& u : d->updates) {
      const auto old = a.compare_and_swap.find(u.ref);
      if (old == a.compare_and_swap.end()) continue;
      u.expect_old = old->second;
      u.update = UpdateMode::expect_old;
    }
    d->redelivery = true;
  }
  d->resumed = a.resumed;
  d->record.bind(journal, a.attempt, outbox);
  return true;
}

// D1: a delivery admitted with its deadline already behind it ends here,
// before any queue, claim or child, saying why. True when it did.
bool Executor::Impl::expired_at_submit(const DeliveryPtr& d) {
  const sys::MonoNs now = sys::mono_now_ns();
  if (now < d->deadline) return false;
  int expected = kQueued;
  COURIER_CLAIM_MOVE(kQueued, kExpired);
  if (!d->claim.compare_exchange_strong(expected, kExpired)) return false;
  const std::int64_t late_ms = d->req.deadline_unix_ms
                                   ? std::max<std::int64_t>(0, journal::wall_now_ms() - *d->req.deadline_unix_ms)
                                   : (now - d->deadline) / sys::kNsPerMs;
  std::string why;
  if (d->resumed) {
    why =
        "the deadline passed while nothing ran this delivery: its previous attempt was interrupted before "
        "dispatch (the process that queued it stopped), and it was submitted again " +
        std::to_string(late_ms) + " ms after its deadline";
  } else if (d->req.deadline_unix_ms) {
    why = "the deadline had passed " + std::to_string(late_ms) + " ms before the delivery was submitted";
  } else {
    why = "the budget (" + std::to_string(d->req.budget.count()) + " ms) ran out before the delivery was queued";
  }
  d->finish(d->never_dispatched(OutcomeKind::deadline_killed, why + "; no child was spawned"));
  return true;
}

}  // namespace courier
