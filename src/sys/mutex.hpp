// mutex.hpp — a mutex, the scoped lock that holds it and the condition
// variable waited on through that lock, in the form Clang's thread-safety
// analysis understands.
//
// libstdc++'s std::mutex carries no capability attributes, so data guarded
// by one cannot be checked. These wrap the standard types one to one (no
// other behaviour, no cost): a field marked COURIER_GUARDED_BY(mu_) is then
// checked at every access by scripts/check-thread-safety. A condition
// variable is waited on through the MutexLock, so a wait is visibly made
// with the lock held. Predicates are written as loops around wait() at the
// call site rather than lambdas, because the analysis checks a lambda's
// body as if no lock were held.
//
// abseil's absl::Mutex is annotated too (Debian libabsl-dev); it is not
// used because it would add a set of shared libraries to a binary that
// binds each of its libraries lazily (docs/design.md) for the sake of three
// small classes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "sys/clock.hpp"
#include "sys/thread_annotations.hpp"

namespace courier::sys {

class COURIER_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() COURIER_ACQUIRE() { m_.lock(); }
  void unlock() COURIER_RELEASE() { m_.unlock(); }

 private:
  friend class MutexLock;
  std::mutex m_;
};

// Holds a Mutex from construction to the end of its scope.
class COURIER_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) COURIER_ACQUIRE(mu) : lock_(mu.m_) {}
  ~MutexLock() COURIER_RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  friend class CondVar;
  std::unique_lock<std::mutex> lock_;
};

// A condition variable whose waits go through a MutexLock: the lock is held
// before and after each wait, as the analysis assumes.
class CondVar {
 public:
  void wait(MutexLock& lock) { cv_.wait(lock.lock_); }
  // Waits until notified or the monotonic instant `until` (sys::kForever:
  // no bound). False when `until` has passed.
  bool wait_until(MutexLock& lock, MonoNs until) {
    if (until == kForever) {
      cv_.wait(lock.lock_);
      return true;
    }
    const std::chrono::steady_clock::time_point t{std::chrono::nanoseconds(until)};
    return cv_.wait_until(lock.lock_, t) == std::cv_status::no_timeout;
  }
  // Waits until notified or `timeout` has passed from now.
  template <typename Rep, typename Period>
  bool wait_for(MutexLock& lock, std::chrono::duration<Rep, Period> timeout) {
    return cv_.wait_for(lock.lock_, timeout) == std::cv_status::no_timeout;
  }
  void notify_all() noexcept { cv_.notify_all(); }
  void notify_one() noexcept { cv_.notify_one(); }

 private:
  std::condition_variable cv_;
};

}  // namespace courier::sys
