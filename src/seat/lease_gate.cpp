// lease_gate.cpp — leases taken, parked for, renewed, lost and dropped.
#include "seat/lease_gate.hpp"

#include <algorithm>

#include "state/state_url.hpp"
#include "wire/text.hpp"

namespace courier::seat {

namespace {

// How much of a lease holder's description a pending event shows.
constexpr std::size_t kMaxHolderShown = 120;

}  // namespace

void LeaseGate::open(const ExecutorOptions& opt, const std::string& host, const std::string& instance, Hooks hooks,
                     sys::MonoNs connect_until) {
  hooks_ = std::move(hooks);
  if (opt.state.empty()) return;
  auto url = state::parse_state_url(opt.state);
  if (!url || url->kind != state::StateUrl::Kind::postgres) return;  // a bad URL is the journal's refusal
  wanted_ = true;
  if (opt.lease_margin < opt.reap_bound + opt.eof_bound) {
    refusal_ = "the lease margin (" + std::to_string(opt.lease_margin / sys::kNsPerMs) +
               " ms) is shorter than a stop's confirmation bound (reap + end of file: " +
               std::to_string((opt.reap_bound + opt.eof_bound) / sys::kNsPerMs) + " ms)";
    hooks_.log(refusal_);
    return;
  }
  LeaseConfig c;
  c.conninfo = url->conninfo;
  c.host = host;
  c.instance = instance;
  c.ttl = opt.lease_ttl;
  c.margin = opt.lease_margin;
  c.connect_until = connect_until;
  LeaseKeeper::Callbacks cb;
  cb.released = [this](const std::string&) {
    {
      sys::MutexLock lock(mu_);
      ++gen_;
    }
    hooks_.wake_workers();
  };
  cb.renewed = [this](const std::string& lane, std::int64_t fence, sys::MonoNs bound) { renewed(lane, fence, bound); };
  cb.lost = [this](const std::string& lane, std::int64_t fence, const std::string& why) { lost(lane, fence, why); };
  auto k = LeaseKeeper::open(std::move(c), std::move(cb));
  if (!k) {
    refusal_ = "the lanes' leases cannot be used (" + url->redacted + "): " + k.error().message;
    hooks_.log(refusal_);
    return;
  }
  keeper_ = std::move(*k);
}

bool LeaseGate::try_take(LeaseWait& w) {
  const auto& d = w.d;
  {
    sys::MutexLock lock(mu_);
    w.gen = gen_;
  }
  auto got = keeper_->try_take(d->lane, d->record.id(), d->deadline);
  if (got) {
    if (auto* lease = std::get_if<Lease>(&*got)) {
      d->lease = *lease;
      d->lease_bound = std::make_shared<supervisor::LeaseBound>(lease->bound);
      {
        sys::MutexLock lock(mu_);
        holders_[d->lane] = d;
      }
      keeper_->keep(*lease);
      return true;
    }
  }
  pending(w, got);
  return false;
}

// The pending event names why (emitted when that changed), and `w` when to
// look again: the holder's expiry plus the margin by the database's clock
// (an expiring lease announces nothing), or, for a database that cannot be
// reached, a retry doubling up to the longest (queued work waits for it;
// only live work stops when the database is lost, L1); never past the
// deadline.
void LeaseGate::pending(LeaseWait& w, const Result<std::variant<Lease, LeaseHeld>>& got) {
  DeliveryEvent e;
  e.kind = DeliveryEvent::Kind::pending;
  e.delivery = w.d->id;
  if (got) {
    const auto& held = std::get<LeaseHeld>(*got);
    e.holder = wire::printable("held by " + held.holder.describe(), kMaxHolderShown);
    w.wake_at = held.free_at;
    w.retry = LeaseWait::kFirstRetry;
  } else {
    e.holder = wire::printable("the lanes' database cannot be reached: " + got.error().message, kMaxHolderShown);
    w.wake_at = sys::mono_now_ns() + w.retry;
    w.retry = std::min(w.retry * 2, LeaseWait::kLongestRetry);
  }
  w.wake_at = std::min(w.wake_at, w.d->deadline);
  bool changed = false;
  {
    sys::MutexLock lock(w.d->mu);
    changed = w.d->state != DeliveryState::pending || w.d->pending.holder != e.holder;
    w.d->state = DeliveryState::pending;
    w.d->pending = e;
  }
  if (changed) w.d->emit(e);
}

void LeaseGate::park(LeaseWait w) {
  {
    sys::MutexLock lock(mu_);
    waits_.push_back(std::move(w));
  }
  hooks_.wake_workers();  // idle workers sleep until the earliest wake-up
}

std::optional<LeaseWait> LeaseGate::take_due() {
  const sys::MonoNs now = sys::mono_now_ns();
  sys::MutexLock lock(mu_);
  for (auto it = waits_.begin(); it != waits_.end(); ++it) {
    if (now >= it->wake_at || it->gen != gen_ || it->d->claim.load() != kSeated) {
      LeaseWait w = std::move(*it);
      waits_.erase(it);
      return w;
    }
  }
  return std::nullopt;
}

std::optional<sys::MonoNs> LeaseGate::earliest_wake() const {
  sys::MutexLock lock(mu_);
  if (waits_.empty()) return std::nullopt;
  sys::MonoNs first = waits_.front().wake_at;
  for (const auto& w : waits_) first = std::min(first, w.wake_at);
  return first;
}

bool LeaseGate::has_waits() const {
  sys::MutexLock lock(mu_);
  return !waits_.empty();
}

void LeaseGate::drop(const DeliveryPtr& d, const Outcome& o) {
  if (!d->lease) return;
  const bool release = o.seat() == SeatDisposition::release;
  {
    sys::MutexLock lock(mu_);
    auto it = holders_.find(d->lane);
    if (it != holders_.end() && it->second.lock() == d) holders_.erase(it);
  }
  if (!release) return;
  if (auto r = keeper_->drop(d->lane, d->lease->fence, true); !r) {
    hooks_.log("lane " + d->lane + ": the lease (fence " + std::to_string(d->lease->fence) +
               ") could not be released; it expires by itself: " + r.error().message);
  }
}

std::optional<std::int64_t> LeaseGate::fence_of(const DeliveryHandle::Shared& d) {
  if (d.req.fence_for_tests) return d.req.fence_for_tests;
  if (d.lease) return d.lease->fence;
  return std::nullopt;
}

void LeaseGate::recovery_questions(RecoveryOptions& ro) {
  if (!keeper_) return;
  ro.host_alive = [k = keeper_.get()](const std::string& h) { return k->host_alive(h); };
  ro.lane_leased = [k = keeper_.get()](const std::string& lane) { return k->lane_leased(lane); };
}

void LeaseGate::close() { keeper_.reset(); }

// The keeper's word on a held lease: a confirmed renewal moves the lease
// bound (L1); a lost one stops the delivery now (cause lease_lost: the kill
// waits for no journal, since a host that lost its database cannot journal
// first).
DeliveryPtr LeaseGate::holder(const std::string& lane, std::int64_t fence) {
  sys::MutexLock lock(mu_);
  auto it = holders_.find(lane);
  if (it == holders_.end()) return nullptr;
  auto d = it->second.lock();
  if (!d || !d->lease || d->lease->fence != fence) return nullptr;
  return d;
}

void LeaseGate::renewed(const std::string& lane, std::int64_t fence, sys::MonoNs bound) {
  if (auto d = holder(lane, fence)) d->lease_bound->move_to(bound);
}

void LeaseGate::lost(const std::string& lane, std::int64_t fence, const std::string& why) {
  if (auto d = holder(lane, fence)) {
    revoke_delivery(d, std::string(kLeaseLostCause) + ": " + why, RevokeCause::lease_lost);
  } else {
    hooks_.log("lane " + lane + ": the lease (fence " + std::to_string(fence) + ") was lost: " + why);
  }
}

}  // namespace courier::seat
