// strays.hpp — orphaned descendants of a delivery that came back to this
// process (a child subreaper) after they lost their parent: found, killed
// and reaped before a stop is confirmed (S2, S3).
#pragma once

#include <cstdint>
#include <vector>

#include "sys/clock.hpp"

namespace courier::supervisor {

struct StrayClaim {
  std::vector<std::int64_t> reaped;  // strays killed (or found dead) and reaped
  std::vector<std::int64_t> alive;   // strays still alive or unreaped at `until`
};

// Every child of this process that it did not spawn through sys::spawn
// (sys::is_own_spawn: another delivery's live child is never taken) and that
// started no earlier than the leader (start_ticks, from /proc; 0 when
// unknown: every such child counts) is sent SIGKILL through a pidfd and
// reaped. Repeated until none is left, since each death may hand this
// process the dead one's own orphans; bounded by `until`.
StrayClaim claim_strays(unsigned long long leader_start_ticks, sys::MonoNs until);

}  // namespace courier::supervisor
