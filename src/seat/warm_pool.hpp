// warm_pool.hpp — children spawned ahead of need: each has said hello and
// waits for a job, so a delivery's turn starts without a spawn.
//
// The pool has its own lock, a leaf: no other lock is taken under it. A
// warm child is supervised by a thread of its own (the spawning thread,
// which must outlive the child); one nobody will use is retired: killed,
// its stop confirmed, its thread joined.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/supervisor.hpp"
#include "sys/mutex.hpp"

namespace courier::seat {

struct WarmSlot {
  std::shared_ptr<supervisor::Supervisor> sup;
  std::thread thread;
  std::promise<Outcome> done;
  std::future<Outcome> outcome = done.get_future();
  // Started before its executor (an early child): taken by the first
  // delivery even before its hello, and never replaced.
  bool early = false;

  // Kills and confirms a warm child nobody will use, and joins its thread.
  void retire(const std::string& why);
  // Its supervisor has returned: the child is gone (it died before any job).
  bool gone() const;
  // Said hello and still there: a job can be handed to it.
  bool usable() const;
};

class WarmPool {
 public:
  // `target` children are kept, each spawned with `base` (no job: the
  // child waits for one).
  WarmPool(std::size_t target, supervisor::SupervisorOptions base);
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;

  // Spawns one more warm child (in the background) when the pool has room
  // for it: the room is reserved first, so concurrent calls never spawn a
  // child only to retire it.
  void start() COURIER_EXCLUDES(mu_);
  // Spawns the pool's target.
  void fill() COURIER_EXCLUDES(mu_);
  // A warm child spawned now with `base` (no job), supervised by a thread
  // of its own; on_ready runs at its hello, on_end (if any) once its
  // supervisor returned (the child gone, or never spawned). Not in any
  // pool yet.
  static std::shared_ptr<WarmSlot> spawn(supervisor::SupervisorOptions base, std::function<void()> on_ready,
                                         std::function<void()> on_end = {});
  // Takes in an early child (spawned before this pool): it does not count
  // against the target, and once used or retired it is not replaced.
  void adopt(std::shared_ptr<WarmSlot> slot) COURIER_EXCLUDES(mu_);
  // A ready warm child, taken out of the pool (or null). Warm children that
  // died waiting are removed on the way (their stop is confirmed by their
  // own supervisor) and replaced.
  std::shared_ptr<WarmSlot> take() COURIER_EXCLUDES(mu_);
  // Puts an unused warm child back; one that has no place there (the pool
  // is closed, or new ones took its place) is retired.
  void keep(std::shared_ptr<WarmSlot> slot) COURIER_EXCLUDES(mu_);

  // How many could take a job now; waits until at least `n` can (or the
  // timeout) and answers how many can.
  std::size_t usable() const COURIER_EXCLUDES(mu_);
  std::size_t wait_usable(std::size_t n, std::chrono::milliseconds timeout) COURIER_EXCLUDES(mu_);
  // The pids of those that could take a job now.
  std::vector<std::int64_t> pids() const COURIER_EXCLUDES(mu_);

  // No more children join (the executor is stopping); then, once no turn
  // can take one any more, every child left is retired.
  void close() COURIER_EXCLUDES(mu_);
  void retire_all() COURIER_EXCLUDES(mu_);

 private:
  bool has_room() const COURIER_REQUIRES(mu_);
  std::size_t usable_locked() const COURIER_REQUIRES(mu_);

  const std::size_t target_;
  const supervisor::SupervisorOptions base_;
  mutable sys::Mutex mu_;
  sys::CondVar cv_;
  std::vector<std::shared_ptr<WarmSlot>> slots_ COURIER_GUARDED_BY(mu_);
  std::size_t starting_ COURIER_GUARDED_BY(mu_) = 0;  // being spawned to join them
  bool closed_ COURIER_GUARDED_BY(mu_) = false;
};

}  // namespace courier::seat
