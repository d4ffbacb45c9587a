// killer.cpp — the deadline killer thread.
#include "supervisor/killer.hpp"

namespace courier::supervisor {

Result<std::unique_ptr<DeadlineKiller>> DeadlineKiller::start(std::shared_ptr<KillDomain> domain, sys::MonoNs deadline,
                                                              std::shared_ptr<sys::EventFd> wake,
                                                              std::shared_ptr<LeaseBound> lease, bool lease_kill) {
  std::unique_ptr<DeadlineKiller> k(new DeadlineKiller());
  auto timer = sys::TimerFd::create();
  if (!timer) return tl::unexpected(timer.error());
  auto cancel = sys::EventFd::create();
  if (!cancel) return tl::unexpected(cancel.error());
  auto moved = sys::EventFd::create();
  if (!moved) return tl::unexpected(moved.error());
  k->domain_ = std::move(domain);
  k->wake_ = std::move(wake);
  k->lease_ = std::move(lease);
  k->deadline_ = deadline;
  k->lease_kill_ = lease_kill;
  k->timer_ = std::move(*timer);
  k->cancel_ = std::move(*cancel);
  k->moved_ = std::make_shared<sys::EventFd>(std::move(*moved));
  // Listen before arming: a move between the two is then seen as a wake-up.
  k->listener_ = LeaseListener(k->lease_, [m = k->moved_] { m->signal(); });
  if (auto armed = k->timer_.arm_at(k->instant()); !armed) return tl::unexpected(armed.error());
  k->thread_ = std::thread([p = k.get()] { p->run(); });
  return k;
}

void DeadlineKiller::run() {
  for (;;) {
    auto ready = sys::wait_readable_until({timer_.fd(), cancel_.fd(), moved_->fd()}, sys::kForever);
    if (!ready) continue;  // poll failed (EINTR is retried inside): try again
    bool rearm = false;
    for (std::size_t i : *ready) {
      if (i == 1) return;  // cancelled
      if (i == 2) rearm = moved_->drain() != 0 || rearm;
    }
    const bool due = timer_.drain();
    const sys::MonoNs now = sys::mono_now_ns();
    if ((due || rearm) && now >= instant()) {
      const StopCause cause =
          kill_is_lease(now, deadline_, lease_.get(), lease_kill_) ? StopCause::lease : StopCause::deadline;
      if (domain_->kill(cause)) fired_.store(true);
      wake_->signal();
      return;
    }
    // Woken early (the bound moved later): wait for the new instant.
    if (due || rearm) (void)timer_.arm_at(instant());
  }
}

DeadlineKiller::~DeadlineKiller() {
  listener_ = LeaseListener();
  cancel_.signal();
  if (thread_.joinable()) thread_.join();
}

}  // namespace courier::supervisor
