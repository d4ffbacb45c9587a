// warm_pool.cpp — warm children: spawned ahead, handed out, kept, retired.
#include "seat/warm_pool.hpp"

#include <algorithm>

namespace courier::seat {

using supervisor::Supervisor;

void WarmSlot::retire(const std::string& why) {
  sup->revoke(why);
  if (thread.joinable()) thread.join();
}

bool WarmSlot::gone() const { return outcome.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }

bool WarmSlot::usable() const { return sup->ready() && !gone(); }

WarmPool::WarmPool(std::size_t target, supervisor::SupervisorOptions base) : target_(target), base_(std::move(base)) {}

bool WarmPool::has_room() const { return !closed_ && slots_.size() + starting_ < target_; }

std::size_t WarmPool::usable_locked() const {
  return static_cast<std::size_t>(
      std::count_if(slots_.begin(), slots_.end(), [](const std::shared_ptr<WarmSlot>& w) { return w->usable(); }));
}

void WarmPool::start() {
  {
    sys::MutexLock lock(mu_);
    if (!has_room()) return;
    ++starting_;
  }
  // Its hello makes it ready: wake anyone waiting for a warm child.
  auto slot = spawn(base_, [this] {
    sys::MutexLock lock(mu_);
    cv_.notify_all();
  });
  {
    sys::MutexLock lock(mu_);
    --starting_;
    if (!closed_) {
      slots_.push_back(std::move(slot));
      return;
    }
  }
  slot->retire("the executor is shutting down");
}

std::shared_ptr<WarmSlot> WarmPool::spawn(supervisor::SupervisorOptions base, std::function<void()> on_ready,
                                          std::function<void()> on_end) {
  base.warm = true;
  base.on_ready = std::move(on_ready);
  auto slot = std::make_shared<WarmSlot>();
  slot->sup = std::make_shared<Supervisor>(std::move(base));
  slot->thread = std::thread([s = slot.get(), end = std::move(on_end)] {
    s->done.set_value(s->sup->run());
    if (end) end();
  });
  return slot;
}

void WarmPool::adopt(std::shared_ptr<WarmSlot> slot) {
  slot->early = true;
  {
    sys::MutexLock lock(mu_);
    if (!closed_) {
      slots_.push_back(std::move(slot));
      cv_.notify_all();
      return;
    }
  }
  slot->retire("the executor is shutting down");
}

void WarmPool::fill() {
  for (std::size_t i = 0; i < target_; ++i) start();
}

std::shared_ptr<WarmSlot> WarmPool::take() {
  std::shared_ptr<WarmSlot> got;
  std::vector<std::shared_ptr<WarmSlot>> dead;
  {
    sys::MutexLock lock(mu_);
    for (auto it = slots_.begin(); it != slots_.end();) {
      if ((*it)->gone()) {
        dead.push_back(std::move(*it));
      } else if (!got && ((*it)->sup->ready() || (*it)->early)) {
        // An early child is taken before its hello: its job waits in its
        // socket, and the child's start goes on overlapping the turn's.
        got = std::move(*it);
      } else {
        ++it;
        continue;
      }
      it = slots_.erase(it);
    }
  }
  for (auto& slot : dead) {
    slot->retire("gone before any job");
    start();
  }
  return got;
}

void WarmPool::keep(std::shared_ptr<WarmSlot> slot) {
  {
    sys::MutexLock lock(mu_);
    if (has_room()) {
      slots_.push_back(std::move(slot));
      cv_.notify_all();
      return;
    }
  }
  slot->retire("not needed");
}

std::size_t WarmPool::usable() const {
  sys::MutexLock lock(mu_);
  return usable_locked();
}

std::size_t WarmPool::wait_usable(std::size_t n, std::chrono::milliseconds timeout) {
  const sys::MonoNs until = sys::mono_after_ms(sys::mono_now_ns(), timeout.count());
  sys::MutexLock lock(mu_);
  while (usable_locked() < n && cv_.wait_until(lock, until)) {
  }
  return usable_locked();
}

std::vector<std::int64_t> WarmPool::pids() const {
  sys::MutexLock lock(mu_);
  std::vector<std::int64_t> out;
  for (const auto& w : slots_) {
    if (w->usable()) out.push_back(w->sup->child_pid());
  }
  return out;
}

void WarmPool::close() {
  sys::MutexLock lock(mu_);
  closed_ = true;
}

void WarmPool::retire_all() {
  std::vector<std::shared_ptr<WarmSlot>> left;
  {
    sys::MutexLock lock(mu_);
    closed_ = true;
    left = std::move(slots_);
    slots_.clear();
  }
  for (auto& slot : left) slot->retire("the executor is shutting down");
}

}  // namespace courier::seat
