// events_linux.cpp — epoll, eventfd and timerfd.
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>

#include "sys/events.hpp"
#include "sys/io.hpp"

static_assert(courier::sys::kReadable == EPOLLIN && courier::sys::kPriority == EPOLLPRI &&
              courier::sys::kWritable == EPOLLOUT);

namespace courier::sys {

Result<EventFd> EventFd::create() {
  EventFd e;
  e.fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!e.fd_) return tl::unexpected(os_error("eventfd", errno));
  return e;
}

void EventFd::signal() const {
  const std::uint64_t one = 1;
  // EAGAIN means the counter is saturated: a wake-up is pending anyway.
  [[maybe_unused]] const ssize_t n = ::write(fd_.get(), &one, sizeof one);
}

std::uint64_t EventFd::drain() const {
  std::uint64_t v = 0;
  if (::read(fd_.get(), &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return 0;
  return v;
}

Result<TimerFd> TimerFd::create() {
  TimerFd t;
  t.fd_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  if (!t.fd_) return tl::unexpected(os_error("timerfd_create", errno));
  return t;
}

Result<void> TimerFd::arm_at(MonoNs at) const {
  itimerspec spec{};
  if (at <= 0) at = 1;  // 0 would disarm; 1 ns is "already past"
  spec.it_value.tv_sec = at / 1'000'000'000;
  spec.it_value.tv_nsec = at % 1'000'000'000;
  if (::timerfd_settime(fd_.get(), TFD_TIMER_ABSTIME, &spec, nullptr) != 0) {
    return tl::unexpected(os_error("timerfd_settime", errno));
  }
  return {};
}

Result<void> TimerFd::disarm() const {
  itimerspec spec{};
  if (::timerfd_settime(fd_.get(), 0, &spec, nullptr) != 0) return tl::unexpected(os_error("timerfd_settime", errno));
  return {};
}

bool TimerFd::drain() const {
  std::uint64_t v = 0;
  return ::read(fd_.get(), &v, sizeof v) == static_cast<ssize_t>(sizeof v) && v > 0;
}

Result<Epoll> Epoll::create() {
  Epoll e;
  e.fd_.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!e.fd_) return tl::unexpected(os_error("epoll_create1", errno));
  return e;
}

Result<void> Epoll::add(int fd, std::uint32_t events, std::uint64_t tag) const {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag;
  if (::epoll_ctl(fd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) return tl::unexpected(os_error("epoll_ctl(ADD)", errno));
  return {};
}

Result<void> Epoll::modify(int fd, std::uint32_t events, std::uint64_t tag) const {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag;
  if (::epoll_ctl(fd_.get(), EPOLL_CTL_MOD, fd, &ev) != 0) return tl::unexpected(os_error("epoll_ctl(MOD)", errno));
  return {};
}

Result<void> Epoll::remove(int fd) const {
  if (::epoll_ctl(fd_.get(), EPOLL_CTL_DEL, fd, nullptr) != 0) return tl::unexpected(os_error("epoll_ctl(DEL)", errno));
  return {};
}

Result<std::vector<Epoll::Ready>> Epoll::wait(int timeout_ms) const {
  epoll_event evs[16];
  const int n = ::epoll_wait(fd_.get(), evs, 16, timeout_ms);
  std::vector<Ready> out;
  if (n < 0) {
    if (errno == EINTR) return out;
    return tl::unexpected(os_error("epoll_wait", errno));
  }
  for (int i = 0; i < n; ++i) out.push_back({evs[i].data.u64, evs[i].events});
  return out;
}

Result<std::vector<std::size_t>> wait_readable_until(const std::vector<int>& fds, MonoNs until) {
  std::vector<pollfd> p;
  p.reserve(fds.size());
  for (int fd : fds) p.push_back({fd, POLLIN, 0});
  for (;;) {
    const MonoNs now = mono_now_ns();
    const MonoNs left = until - now;
    int ms = -1;
    if (until != kForever) {
      const MonoNs rounded = left <= 0 ? 0 : (left + kNsPerMs - 1) / kNsPerMs;
      ms = rounded > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(rounded);
    }
    const int n = ::poll(p.data(), p.size(), ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected(os_error("poll", errno));
    }
    std::vector<std::size_t> ready;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[i].revents) ready.push_back(i);
    }
    if (!ready.empty() || (until != kForever && mono_now_ns() >= until)) return ready;
  }
}

Result<bool> wait_fd_until(int fd, std::uint32_t events, MonoNs until) {
  pollfd p{fd, 0, 0};
  if (events & kReadable) p.events = static_cast<short>(p.events | POLLIN);
  if (events & kWritable) p.events = static_cast<short>(p.events | POLLOUT);
  for (;;) {
    int ms = -1;
    if (until != kForever) {
      const MonoNs left = until - mono_now_ns();
      const MonoNs rounded = left <= 0 ? 0 : (left + kNsPerMs - 1) / kNsPerMs;
      ms = rounded > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(rounded);
    }
    const int n = ::poll(&p, 1, ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected(os_error("poll", errno));
    }
    if (n > 0 && p.revents != 0) return true;
    if (until != kForever && mono_now_ns() >= until) return false;
  }
}

}  // namespace courier::sys
