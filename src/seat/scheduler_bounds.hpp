// scheduler_bounds.hpp — the executor's scheduler thread when it cannot
// wait on its descriptors (docs/design.md, "Deadline while pending").
#pragma once

#include "sys/clock.hpp"

namespace courier::seat {

// The longest the scheduler waits between looks while poll(2) fails on its
// descriptors (the process's descriptor limit lowered under it, no memory
// for the kernel's tables): it then wakes at the earliest queued deadline
// and at least this often, to expire queued deliveries, see a lane freed by
// another process and try poll again, and never spins.
inline constexpr sys::MonoNs kSchedulerRetryWait = 10 * sys::kNsPerMs;

// How long the workers keep looking, every kSchedulerRetryWait, after a lane
// lock was closed in another process. The kernel announces the close
// (inotify's IN_CLOSE, fsnotify_close in __fput) before it drops the flock
// that went with it (locks_remove_file, a few instructions later): a worker
// woken by the close can find the lock still held, and no second close
// comes. Looking again for a while sees the lock go.
inline constexpr sys::MonoNs kCloseRecheckWindow = 1000 * sys::kNsPerMs;

}  // namespace courier::seat
