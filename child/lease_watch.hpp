// lease_watch.hpp — the child's own lease timer (L2). A job that carries a
// lease bound makes the child arm a timer at it that SIGKILLs the child's
// whole process group (its kill domain: git pack-objects included) when it
// fires, whatever the parent does — a parent that is stuck, frozen or cut
// off cannot keep a stale holder pushing past the lease.
//
// New bounds come as `lease` frames at any time, also while the child is in
// the middle of a leg and not reading; so once the watch runs it owns the
// reading of the parent's channel: a reader thread takes every frame, re-arms
// the timer on a lease frame at once, and queues every other frame for the
// conversation (Channel) to take in order.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "courier/result.hpp"
#include "protocol/messages.hpp"
#include "sys/events.hpp"

namespace courier::child {

class LeaseWatch {
 public:
  // Arms the timer at `bound` and starts reading frames from `in_fd`.
  // Errors: os_error (no timer, no thread: the child must not run a job it
  // cannot bound).
  static Result<std::unique_ptr<LeaseWatch>> start(int in_fd, sys::MonoNs bound);
  // Stops both threads and joins them (the timer is disarmed first).
  ~LeaseWatch();
  LeaseWatch(const LeaseWatch&) = delete;
  LeaseWatch& operator=(const LeaseWatch&) = delete;

  // The next frame from the parent that is not a lease frame, in order;
  // blocks. Errors: those of decoding and reading; frame_truncated_length
  // when the parent closed the channel.
  Result<protocol::ParentMessage> receive();

  // The bound the timer is armed at now.
  sys::MonoNs bound() const;

 private:
  LeaseWatch() = default;
  void read_loop();
  void timer_loop();
  void rearm(sys::MonoNs later);

  int in_ = -1;
  sys::TimerFd timer_;
  sys::EventFd stop_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Result<protocol::ParentMessage>> inbox_;
  bool closed_ = false;  // the reader ended: nothing more will come
  sys::MonoNs bound_ = 0;
  std::thread reader_;
  std::thread timer_thread_;
};

}  // namespace courier::child
