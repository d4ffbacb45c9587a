// delivery_shared.cpp — one delivery's outcome, written once, and its
// revocation's journal entry, written before the kill (J1, J5).
#include "seat/delivery_shared.hpp"

#include <chrono>
#include <cstdio>
#include <future>

#include "courier/host_api.hpp"
#include "seat/outcome_refs.hpp"

namespace courier {

DeliveryHandle::Shared::~Shared() {
  std::thread writer;
  {
    sys::MutexLock lock(mu);
    writer = std::move(revoke_writer);
  }
  if (writer.joinable()) writer.join();
}

void DeliveryHandle::Shared::finish(Outcome o) {
  std::thread writer;
  {
    sys::MutexLock lock(mu);
    while (revoke_pending) cv.wait(lock);
    if (finishing) {
      std::fprintf(stderr, "git-courier: delivery %llu was finished twice; the second outcome (%s) is ignored\n",
                   static_cast<unsigned long long>(id), outcome_name(o.kind));
      return;
    }
    finishing = true;
    writer = std::move(revoke_writer);
    if (revoke_unjournalled && !o.revoke_unjournalled) {
      o.revoke_unjournalled = true;
      o.reason += "; the revocation's intent was not journalled within " +
                  std::to_string(kRevokeJournalBound / sys::kNsPerMs) + " ms, so the kill went ahead without it";
    }
  }
  if (writer.joinable()) writer.join();  // its revoke_requested entry precedes `finished`
  // Every ref of the request, also in an outcome no child's result named
  // (decided before dispatch, or replayed from a row without refs).
  seat::fill_refs(o, updates.empty() ? seat::updates_of(req) : updates);
  {
    sys::MutexLock lock(mu);
    o.timings.revoke_journalled = revoke_journalled_ns;
    if (revoke_ns != 0) o.timings.revoke = revoke_ns;  // the caller's instant, before its entry
    // A result refused because the revocation came first: the supervisor
    // may not have heard the revocation's words yet.
    if (revoke_ns != 0 && o.kind == OutcomeKind::revoked && !o.revoked_by) {
      o.revoke_cause = revoke_reason;
      o.revoked_by = revoke_by;
    }
  }
  record.finish(o);
  {
    sys::MutexLock lock(mu);
    outcome = std::move(o);
    state = DeliveryState::finished;
  }
  cv.notify_all();
  DeliveryEvent e;
  e.kind = DeliveryEvent::Kind::finished;
  e.delivery = id;
  emit(e);
}

// The entry is written on a thread of its own and the kill waits for it at
// most kRevokeJournalBound (past it, the outcome says so and the entry
// still comes before `finished`). A lost lease's kill waits for nothing: a
// host that lost its database cannot journal first.
void DeliveryHandle::Shared::revoke_live(const std::string& reason, RevokeCause cause) {
  if (!record.journalled()) return;
  auto written = std::make_shared<std::promise<void>>();
  auto done = written->get_future();
  std::thread writer([this, reason, cause, written] {
    journal_revocation(reason, cause, true);
    written->set_value();
  });
  {
    sys::MutexLock lock(mu);
    revoke_writer = std::move(writer);
  }
  if (cause == RevokeCause::lease_lost) return;
  if (done.wait_for(std::chrono::nanoseconds(kRevokeJournalBound)) != std::future_status::ready) {
    sys::MutexLock lock(mu);
    revoke_unjournalled = true;
  }
}

// The revocation (cause authority, final under its id) is journalled
// first, within kRevokeJournalBound, like a caller's.
void DeliveryHandle::Shared::authority_revoked(const std::string& words) {
  {
    sys::MutexLock lock(mu);
    // One still deciding may be a withdrawal that takes its mark back.
    while (revoke_pending) cv.wait(lock);
    if (revoke_ns != 0 || finishing) return;  // a revocation is already on its way
    revoke_ns = sys::mono_now_ns();
    revoke_reason = words;
    revoke_by = RevokeCause::authority;
    revoke_pending = true;
  }
  revoke_live(words, RevokeCause::authority);
  {
    sys::MutexLock lock(mu);
    revoke_pending = false;
  }
  cv.notify_all();
}

void DeliveryHandle::Shared::journal_revocation(const std::string& reason, RevokeCause cause, bool claimed) {
  if (!record.revoke_requested(reason, cause, claimed)) return;
  sys::MutexLock lock(mu);
  revoke_journalled_ns = sys::mono_now_ns();
}

Outcome DeliveryHandle::Shared::never_dispatched(OutcomeKind kind, std::string reason) const {
  Outcome o;
  o.kind = kind;
  o.reason = std::move(reason);
  o.deadline = deadline;
  o.timings.submitted = submitted;
  o.bytes_sent = 0;
  sys::MutexLock lock(mu);
  o.timings.revoke = revoke_ns;
  if (revoke_ns != 0) {
    o.revoke_cause = revoke_reason;
    o.revoked_by = revoke_by;
  }
  return o;
}

Outcome DeliveryHandle::Shared::revoked_before_dispatch() const {
  std::string words;
  {
    sys::MutexLock lock(mu);
    words = revoke_reason;
  }
  return never_dispatched(OutcomeKind::cancelled_no_dispatch, "revoked before dispatch: " + words);
}

bool DeliveryHandle::Shared::revoked() const {
  sys::MutexLock lock(mu);
  return revoke_ns != 0;
}

std::string DeliveryHandle::Shared::pending_holder() const {
  sys::MutexLock lock(mu);
  return pending.holder;
}

}  // namespace courier
