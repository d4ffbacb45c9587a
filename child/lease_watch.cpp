// lease_watch.cpp — the child's lease timer and the reader that feeds it.
#include "child/lease_watch.hpp"

#include <cstdio>

#include "protocol/frame.hpp"
#include "sys/process.hpp"

namespace courier::child {

Result<std::unique_ptr<LeaseWatch>> LeaseWatch::start(int in_fd, sys::MonoNs bound) {
  std::unique_ptr<LeaseWatch> w(new LeaseWatch());
  auto timer = sys::TimerFd::create();
  if (!timer) return tl::unexpected(timer.error());
  auto stop = sys::EventFd::create();
  if (!stop) return tl::unexpected(stop.error());
  w->in_ = in_fd;
  w->timer_ = std::move(*timer);
  w->stop_ = std::move(*stop);
  w->bound_ = bound;
  if (auto armed = w->timer_.arm_at(bound); !armed) return tl::unexpected(armed.error());
  w->timer_thread_ = std::thread([p = w.get()] { p->timer_loop(); });
  w->reader_ = std::thread([p = w.get()] { p->read_loop(); });
  return w;
}

LeaseWatch::~LeaseWatch() {
  (void)timer_.disarm();
  stop_.signal();
  if (timer_thread_.joinable()) timer_thread_.join();
  if (reader_.joinable()) reader_.join();
}

sys::MonoNs LeaseWatch::bound() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bound_;
}

void LeaseWatch::rearm(sys::MonoNs later) {
  std::lock_guard<std::mutex> lock(mu_);
  if (later <= bound_) return;  // a bound only moves later
  bound_ = later;
  (void)timer_.arm_at(later);
}

// Waits for the timer alone (and the stop): nothing it does can block, so
// the kill lands at the bound however busy the rest of the child is.
void LeaseWatch::timer_loop() {
  for (;;) {
    auto ready = sys::wait_readable_until({timer_.fd(), stop_.fd()}, sys::kForever);
    if (!ready) continue;
    for (std::size_t i : *ready) {
      if (i == 1) return;
    }
    if (!timer_.drain()) continue;
    // Re-armed to a later bound after this expiry was queued: not yet.
    if (sys::mono_now_ns() < bound()) continue;
    std::fprintf(stderr, "git-courier: the lane's lease bound passed: killing this delivery's processes\n");
    std::fflush(stderr);
    (void)sys::kill_own_process_group();
    return;
  }
}

// Reads every frame: a lease frame re-arms the timer at once; any other is
// queued for the conversation. Ends at end-of-file, an error, or the stop.
void LeaseWatch::read_loop() {
  for (;;) {
    auto ready = sys::wait_readable_until({in_, stop_.fd()}, sys::kForever);
    if (!ready) continue;
    bool readable = false;
    for (std::size_t i : *ready) {
      if (i == 1) return;
      readable = true;
    }
    if (!readable) continue;
    auto frame = protocol::read_frame(in_);
    Result<protocol::ParentMessage> msg =
        !frame    ? Result<protocol::ParentMessage>(tl::unexpected(frame.error()))
        : !*frame ? Result<protocol::ParentMessage>(fail(Errc::frame_truncated_length, "the parent closed the channel"))
                  : protocol::decode_parent(**frame);
    if (msg && std::holds_alternative<protocol::Lease>(*msg)) {
      rearm(std::get<protocol::Lease>(*msg).bound_mono_ns);
      continue;
    }
    const bool last = !msg;
    {
      std::lock_guard<std::mutex> lock(mu_);
      inbox_.push_back(std::move(msg));
      closed_ = last;
    }
    cv_.notify_all();
    if (last) return;
  }
}

Result<protocol::ParentMessage> LeaseWatch::receive() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !inbox_.empty(); });
  auto msg = std::move(inbox_.front());
  // The reader's last word (an error) stays, for every later receive too.
  if (inbox_.size() > 1 || !closed_) inbox_.pop_front();
  return msg;
}

}  // namespace courier::child
