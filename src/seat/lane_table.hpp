// lane_table.hpp — one executor's lanes: each lane's seat in this process,
// its lock file held across processes (S1), its holder record, and the
// seats poisoned lanes retain for the life of the process (S3).
//
// The table has no lock of its own: the executor's lock guards it whole
// (Executor::Impl::lanes is COURIER_GUARDED_BY(mu)), since a seat is taken
// in the same step as the queue entry that wanted it. Poisoning is a fact
// of the process, not of one executor, and has a leaf lock of its own.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "courier/courier.hpp"
#include "sys/events.hpp"
#include "sys/flock.hpp"

namespace courier::seat {

struct Lane {
  std::optional<sys::LockFile> file;  // this executor's one description of the lane lock
  int watch = -1;
  std::uint64_t holder = 0;  // delivery holding the seat here (0: free)
  std::int64_t holder_child = 0;
  std::uint64_t poisoned_by = 0;  // unconfirmed delivery that retains the seat forever
  // Found held at the table's epoch `held_epoch` (0: not known held), by
  // the holder `held_by` names: while the epoch is the same, nothing can
  // have let it go, and the lane is not tried again.
  std::uint64_t held_epoch = 0;
  DeliveryEvent held_by;
};

class LaneTable {
 public:
  // Where the lock files are (or why there are none: every lane is then
  // refused with that reason), and the close watch, if any, that tells the
  // scheduler a holder elsewhere let go. Both outlive the table.
  void attach(const Result<std::shared_ptr<const sys::LaneDir>>* dir, sys::CloseWatcher* watcher);

  // The lane, its lock file opened (once). Errors: those of
  // sys::LockFile::open, or the lane directory's refusal.
  Result<Lane*> lane_for(const std::string& key);
  // The lane if it was ever opened here.
  const Lane* find(const std::string& key) const;

  // Who holds this lane, as a pending event for delivery `id`.
  DeliveryEvent pending_event(std::uint64_t id, const Lane& lane) const;

  // Something may have let a lane go, or changed who holds it: a turn
  // ended here or its child came (end_turn and child_spawned do this
  // themselves), a lane lock was closed in another process, a revocation,
  // a lease. Every lane found held is tried again at the next look. Nothing
  // else can free a lane, so between two of these a look at the queue tries
  // each held lane's lock, and reads its holder, once, not once per
  // delivery queued on it nor once per look (thousands of deliveries
  // queued behind held lanes cost a submission no system call per lane).
  void may_have_freed() { ++epoch_; }
  // Who held the lane when it was last found held, if nothing may have let
  // it go since; null: try it (try_seat), and note_held() what was found.
  const DeliveryEvent* known_held(const Lane& lane) const;
  const DeliveryEvent& note_held(Lane& lane, DeliveryEvent holder) const;

  // The seat: this process's (holder 0) and the lock file's, taken without
  // waiting. True when both are now this delivery's to claim (hold() it,
  // or give_back() if the claim word was lost meanwhile).
  bool try_seat(Lane& lane) const;
  // A lane try_seat() found held by another process: watched for the
  // holder's close (once), then tried again. True as try_seat().
  bool watch_held(Lane& lane) const;
  void hold(Lane& lane, std::uint64_t id, const std::string& key) const;
  void give_back(Lane& lane) const;
  // The child of the seat's holder exists: its pid goes into the holder
  // record, unless the seat has moved on (observers run late).
  void child_spawned(const std::string& key, std::uint64_t id, std::int64_t pid);
  // The lock file's descriptor, inherited by the turn's child (S6).
  int inherit_fd(const std::string& key);

  // The seat's release rule (S2, S3) applied to a finished turn: released,
  // or retained and the lane poisoned. The poisoning's log line, when it
  // was poisoned now.
  std::optional<std::string> end_turn(const std::string& key, std::uint64_t id, const Outcome& o);

  // Why this lane is refused, if it is poisoned: by a delivery of this
  // table, or of any other executor of this process (S3).
  std::optional<std::string> poisoned(const std::string& key, const Lane* lane) const;

  // The executor ends: the lock files of poisoned lanes are kept open for
  // the life of the process (retained_lane_lock_fds()).
  void retain_poisoned();

 private:
  const Result<std::shared_ptr<const sys::LaneDir>>* dir_ = nullptr;
  sys::CloseWatcher* watcher_ = nullptr;
  std::map<std::string, Lane> lanes_;
  std::uint64_t epoch_ = 1;
};

// How many lanes this process has poisoned (S3): a count that never
// decreases, for the service's metrics.
std::size_t poisoned_lane_count();

}  // namespace courier::seat
