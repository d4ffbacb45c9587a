// killer.cpp — the deadline killer thread.
#include "supervisor/killer.hpp"

namespace courier::supervisor {

Result<std::unique_ptr<DeadlineKiller>> DeadlineKiller::start(std::shared_ptr<KillDomain> domain, sys::MonoNs deadline,
                                                              std::shared_ptr<sys::EventFd> wake) {
  std::unique_ptr<DeadlineKiller> k(new DeadlineKiller());
  auto timer = sys::TimerFd::create();
  if (!timer) return tl::unexpected(timer.error());
  auto cancel = sys::EventFd::create();
  if (!cancel) return tl::unexpected(cancel.error());
  if (auto armed = timer->arm_at(deadline); !armed) return tl::unexpected(armed.error());
  k->domain_ = std::move(domain);
  k->wake_ = std::move(wake);
  k->timer_ = std::move(*timer);
  k->cancel_ = std::move(*cancel);
  k->thread_ = std::thread([p = k.get()] { p->run(); });
  return k;
}

void DeadlineKiller::run() {
  for (;;) {
    auto ready = sys::wait_readable_until({timer_.fd(), cancel_.fd()}, sys::kForever);
    if (!ready) continue;  // poll failed (EINTR is retried inside): try again
    for (std::size_t i : *ready) {
      if (i == 1) return;  // cancelled
    }
    if (timer_.drain()) {
      if (domain_->kill(StopCause::deadline)) fired_.store(true);
      wake_->signal();
      return;
    }
  }
}

DeadlineKiller::~DeadlineKiller() {
  cancel_.signal();
  if (thread_.joinable()) thread_.join();
}

}  // namespace courier::supervisor
