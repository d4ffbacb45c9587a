// recovery.hpp — finishing what a dead process left in the journal (J3):
// deliveries without `finished` whose submitter is gone, and retained ones
// whose child may since have stopped.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
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
  // Across hosts (a journal several hosts share): this host's name, and the
  // database's word on another host and on a lane's lease. Another host's
  // delivery is finished only when that host shows no life and its lane's
  // lease has expired plus the margin (never one with a live lease); its
  // child, on that host, is not looked for here (the lease bound killed it,
  // L1/L2). Without them, another host's deliveries are left alone.
  std::string host;
  std::function<Result<bool>(const std::string& host)> host_alive;
  std::function<Result<bool>(const std::string& lane)> lane_leased;
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

// Whether the live process `pid` is provably a delivery child of this
// user (J3): owned by this process's effective uid, running this program,
// the leader of its own process group, and in this process's cgroup or a
// delivery cgroup directly under it. Recovery signals nothing else.
bool provably_a_delivery_child(std::int64_t pid);

}  // namespace courier::seat
