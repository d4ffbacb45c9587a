// scheduler.cpp — queued deliveries expired at their deadline (D1), and
// workers woken when a lane lock is closed elsewhere.
#include "seat/scheduler.hpp"

#include <algorithm>

#include "seat/executor_core.hpp"
#include "seat/scheduler_bounds.hpp"

namespace courier::seat {

namespace {

using Finished = Executor::Impl::Finished;

// The scheduler's scan: finishes every queued delivery whose deadline has
// passed (into `finished`, published by the caller outside the lock) and
// answers the earliest deadline still queued (kForever: none), or nothing
// when the executor is stopping and the queue is empty. The workers are
// woken to look at the queue again when `wake_workers` (a lane lock closed
// elsewhere, a timer) or when a delivery expired; a submission's wake-up
// alone does not wake them (the submission woke one itself, and each look
// scans the whole queue).
std::optional<sys::MonoNs> expire_queued(Executor::Impl& exec, Finished& finished, bool wake_workers) {
  sys::MonoNs next = sys::kForever;
  sys::MutexLock lock(exec.mu);
  if (exec.stopping && exec.queue.empty()) return std::nullopt;
  const sys::MonoNs now = sys::mono_now_ns();
  for (auto& d : exec.queue) {
    if (d->claim.load() != kQueued) continue;
    if (d->deadline > now) {
      next = std::min(next, d->deadline);
      continue;
    }
    int expected = kQueued;
    COURIER_CLAIM_MOVE(kQueued, kExpired);
    if (!d->claim.compare_exchange_strong(expected, kExpired)) continue;
    const std::string holder = d->pending_holder();
    finished.emplace_back(d, d->never_dispatched(OutcomeKind::deadline_killed,
                                                 "the deadline passed while waiting for the lane" +
                                                     (holder.empty() ? std::string() : " (held by " + holder + ")") +
                                                     "; no child was spawned"));
  }
  if (wake_workers) exec.lanes.may_have_freed();
  if (wake_workers || !finished.empty()) exec.cv.notify_all();
  return next;
}

}  // namespace

Result<void> Scheduler::open() {
  auto wake = sys::EventFd::create();
  if (!wake) return tl::unexpected(wake.error());
  auto timer = sys::TimerFd::create();
  if (!timer) return tl::unexpected(timer.error());
  wake_ = std::move(*wake);
  timer_ = std::move(*timer);
  return {};
}

void Scheduler::start(Executor::Impl& exec) {
  thread_ = std::thread([this, &exec] { run(exec); });
}

void Scheduler::wake() {
  if (wake_) wake_->signal();
}

void Scheduler::join() {
  if (thread_.joinable()) thread_.join();
}

void Scheduler::run(Executor::Impl& exec) {
  bool poll_failing = false;
  bool wake_workers = true;
  for (;;) {
    Finished finished;
    const std::optional<sys::MonoNs> next = expire_queued(exec, finished, wake_workers);
    if (!next) return;
    for (auto& [who, o] : finished) who->finish(std::move(o));
    wake_workers = wait(exec, *next, poll_failing);
  }
}

// Waits for a wake-up, a lane lock closed elsewhere, or `next`. The poll
// is bounded by `next` itself, so a timer that could not be armed cannot
// make a deadline late. A poll that fails (EINVAL when the descriptor
// limit was lowered below the three it watches, ENOMEM) would otherwise
// be retried at once, forever, at full speed: instead the failure is
// logged once and the scheduler waits on the executor's condition (the
// executor's own stop and every release notify it) until `next`, at most
// kSchedulerRetryWait, trying poll again each time; its recovery is
// logged once too. Queued deadlines are still kept; a lane freed in
// another process is seen within kSchedulerRetryWait instead of at once.
// True unless the wake-up event alone ended the wait (a submission or a
// stop, which notify the workers themselves).
bool Scheduler::wait(Executor::Impl& exec, sys::MonoNs next, bool& poll_failing) {
  if (const sys::MonoNs now = sys::mono_now_ns(); now < recheck_until_) {
    next = std::min(next, now + kSchedulerRetryWait);
  }
  if (next != sys::kForever) {
    (void)timer_->arm_at(next);
  } else {
    (void)timer_->disarm();
  }
  std::vector<int> fds = {wake_->fd(), timer_->fd()};
  if (exec.watcher) fds.push_back(exec.watcher->fd());
  auto ready = sys::wait_readable_until(fds, next);
  if (ready) {
    // The watcher is the third descriptor: a lane lock closed elsewhere.
    if (exec.watcher && std::find(ready->begin(), ready->end(), std::size_t{2}) != ready->end()) {
      recheck_until_ = sys::mono_now_ns() + kCloseRecheckWindow;
    }
    if (poll_failing) exec.log("the scheduler waits on its descriptors again");
    poll_failing = false;
    wake_->drain();
    timer_->drain();
    if (exec.watcher) exec.watcher->drain();
    // Nothing ready: the instant came (a deadline, a recheck).
    return ready->empty() || std::any_of(ready->begin(), ready->end(), [](std::size_t i) { return i != 0; });
  }
  if (!poll_failing) {
    exec.log("the scheduler cannot wait on its descriptors (" + ready.error().message + "); it looks again every " +
             std::to_string(kSchedulerRetryWait / sys::kNsPerMs) + " ms and at each queued deadline until it can");
  }
  poll_failing = true;
  const sys::MonoNs until = std::min(next, sys::mono_now_ns() + kSchedulerRetryWait);
  sys::MutexLock lock(exec.mu);
  exec.cv.wait_until(lock, until);
  return true;
}

}  // namespace courier::seat
