// events.hpp — the event sources a drive loop waits on: epoll, an eventfd
// (wake-ups from other threads), and a timerfd armed at an absolute
// CLOCK_MONOTONIC instant. No polling clocks: every wait is for an event.
#pragma once

#include <cstdint>
#include <vector>

#include "courier/result.hpp"
#include "sys/clock.hpp"
#include "sys/fd.hpp"

namespace courier::sys {

class EventFd {
 public:
  // Errors: os_error.
  static Result<EventFd> create();
  // Async-signal-safe and thread-safe: adds 1. Never blocks.
  void signal() const;
  // Reads and resets the counter (0 when nothing was signalled).
  std::uint64_t drain() const;
  int fd() const { return fd_.get(); }

 private:
  ScopedFd fd_;
};

class TimerFd {
 public:
  static Result<TimerFd> create();
  // Fires once at the absolute monotonic instant `at` (immediately if past).
  Result<void> arm_at(MonoNs at) const;
  Result<void> disarm() const;
  // Consumes an expiry; true if it had fired.
  bool drain() const;
  int fd() const { return fd_.get(); }

 private:
  ScopedFd fd_;
};

// What an Epoll watches a descriptor for (and reports in Ready::events):
// the epoll(7) bits, named here so that no caller needs <sys/epoll.h>.
inline constexpr std::uint32_t kReadable = 0x001;  // EPOLLIN
inline constexpr std::uint32_t kPriority = 0x002;  // EPOLLPRI (cgroup.events changed)
inline constexpr std::uint32_t kWritable = 0x004;  // EPOLLOUT

class Epoll {
 public:
  static Result<Epoll> create();
  // events: kReadable, kWritable, kPriority (or 0: watched for nothing,
  // kept registered); `tag` comes back in wait().
  Result<void> add(int fd, std::uint32_t events, std::uint64_t tag) const;
  Result<void> modify(int fd, std::uint32_t events, std::uint64_t tag) const;
  Result<void> remove(int fd) const;
  struct Ready {
    std::uint64_t tag;
    std::uint32_t events;
  };
  // Blocks until something is ready (timeout_ms -1: no timeout). EINTR is
  // an empty result. Errors: os_error.
  Result<std::vector<Ready>> wait(int timeout_ms) const;
  int fd() const { return fd_.get(); }

 private:
  ScopedFd fd_;
};

// poll(2) for readability of up to a few descriptors until an absolute
// monotonic instant. Returns the indexes that are readable (empty at the
// instant). Errors: os_error.
Result<std::vector<std::size_t>> wait_readable_until(const std::vector<int>& fds, MonoNs until);

// poll(2) for one descriptor to become ready for `events` (kReadable and/or
// kWritable) until an absolute monotonic instant: true when it is ready (an
// error or hang-up counts as ready: the next read or write says which),
// false at the instant. Errors: os_error.
Result<bool> wait_fd_until(int fd, std::uint32_t events, MonoNs until);

}  // namespace courier::sys
