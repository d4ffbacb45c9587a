// recovery.hpp — finishing what a dead process left in the journal (J3):
// deliveries without `finished` whose submitter is gone, and retained ones
// whose child may since have stopped.
#pragma once

#include <memory>
#include <vector>

#include "courier/courier.hpp"
#include "journal/journal.hpp"
#include "sys/clock.hpp"
#include "sys/flock.hpp"

namespace courier::seat {

struct RecoveryOptions {
  journal::Journal* journal = nullptr;
  // The lane directory whose locks say whether a lane is held (null: lanes
  // are not checked, and only the submitter's liveness protects a delivery).
  std::shared_ptr<const sys::LaneDir> lane_dir;
  ReadBackFn read_back;
  // How long a leftover child gets to disappear after SIGKILL.
  sys::MonoNs stop_bound = kReapBound + kEofBound;
};

// One pass over the journal's open work (see Executor::recover). Returns the
// outcomes it finished now. Errors: journal_failed (the list could not be read).
Result<std::vector<Outcome>> recover(const RecoveryOptions& options);

// The remote_effect the last durable transitions of the latest attempt allow
// (J2): none without post_started; the answered effect when a report was
// read; possible otherwise.
RemoteEffect recovered_effect(const journal::Record& r);

// Stops whatever of the process `child` names still runs: SIGKILL through a
// pidfd opened and re-identified first (never a pid alone, J3) and to its
// process group, then waits up to `bound` for it to be gone. True when
// nothing of it is seen afterwards.
bool stop_leftover(const journal::ProcessIdentity& child, sys::MonoNs bound);

}  // namespace courier::seat
