// lease_bound.cpp — the lease bound, its listeners, and the kill instant.
#include "supervisor/lease_bound.hpp"

#include <algorithm>

namespace courier::supervisor {

sys::MonoNs LeaseBound::get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bound_;
}

void LeaseBound::move_to(sys::MonoNs later) {
  std::lock_guard<std::mutex> lock(mu_);
  if (later <= bound_) return;
  bound_ = later;
  for (const auto& [id, listener] : listeners_) listener();
}

std::uint64_t LeaseBound::listen(Listener listener) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t id = next_id_++;
  listeners_.emplace_back(id, std::move(listener));
  return id;
}

void LeaseBound::unlisten(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.erase(
      std::remove_if(listeners_.begin(), listeners_.end(), [id](const auto& entry) { return entry.first == id; }),
      listeners_.end());
}

LeaseListener::LeaseListener(std::shared_ptr<LeaseBound> bound, LeaseBound::Listener listener)
    : bound_(std::move(bound)) {
  if (bound_) id_ = bound_->listen(std::move(listener));
}

LeaseListener::~LeaseListener() { reset(); }

LeaseListener::LeaseListener(LeaseListener&& other) noexcept
    : bound_(std::move(other.bound_)), id_(std::exchange(other.id_, 0)) {}

LeaseListener& LeaseListener::operator=(LeaseListener&& other) noexcept {
  if (this != &other) {
    reset();
    bound_ = std::move(other.bound_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void LeaseListener::reset() {
  if (bound_ && id_ != 0) bound_->unlisten(id_);
  bound_.reset();
  id_ = 0;
}

sys::MonoNs kill_instant(sys::MonoNs deadline, const LeaseBound* lease, bool lease_kill) {
  if (!lease || !lease_kill) return deadline;
  return std::min(deadline, lease->get());
}

bool kill_is_lease(sys::MonoNs now, sys::MonoNs deadline, const LeaseBound* lease, bool lease_kill) {
  if (!lease || !lease_kill) return false;
  const sys::MonoNs bound = lease->get();
  return bound < deadline && now >= bound;
}

}  // namespace courier::supervisor
