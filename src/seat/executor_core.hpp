// executor_core.hpp — what one Executor holds, and which lock guards what.
//
// The executor's lock (mu) guards the queue, the lane table, the running
// list and the stopping flag together: a worker takes a seat in the same
// step as the queue entry that wanted it. The warm pool, the lease gate and
// each delivery have locks of their own, all leaves under this one. Each
// concept lives in a room of its own:
//   lane_table   seats, lock files, poisoning, retained stops
//   warm_pool    children spawned ahead of need
//   lease_gate   leases across hosts, parked lease waits
//   scheduler    the expiry timer and lane-close wake-ups
//   workers      the worker loop: the next runnable delivery or due wait
//   turn         one delivery's turn on its seat: lease, claim, child
//   submission   a request checked, admitted to the journal, queued
//   delivery_*   the delivery's shared state and the caller's handle
// The annotations are checked by scripts/check-thread-safety.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "courier/courier.hpp"
#include "journal/journal.hpp"
#include "seat/delivery_shared.hpp"
#include "seat/journal_outbox.hpp"
#include "seat/lane_table.hpp"
#include "seat/lease_gate.hpp"
#include "seat/scheduler.hpp"
#include "seat/warm_pool.hpp"
#include "sys/events.hpp"
#include "sys/flock.hpp"
#include "sys/mutex.hpp"

namespace courier {

struct Executor::Impl {
  // Set at construction, read-only after (no lock).
  ExecutorOptions opt;
  Result<std::shared_ptr<const sys::LaneDir>> lane_dir = fail(Errc::invalid_argument, "no lane directory");
  std::optional<sys::CloseWatcher> watcher;
  // This host's name, as leases and the journal show it (host_id, or the
  // host name), and this executor among every host's.
  std::string host;
  std::string instance;
  // The journal (J1-J4), when one was asked for; or why it cannot be used
  // (every delivery is then refused before dispatch).
  std::shared_ptr<journal::Journal> journal;
  std::string journal_refusal;
  // Entries the journal could not take yet, written again in order (a
  // database that restarts or is cut off for a while loses nothing).
  std::shared_ptr<seat::JournalOutbox> outbox;
  Result<std::vector<Outcome>> recovered = std::vector<Outcome>();
  // This process, as the journal's submissions name it (J3), once.
  journal::ProcessIdentity self;

  sys::Mutex mu;
  sys::CondVar cv;  // workers wait on it: work queued, a seat released, a claim word moved
  std::deque<DeliveryPtr> queue COURIER_GUARDED_BY(mu);
  seat::LaneTable lanes COURIER_GUARDED_BY(mu);
  std::vector<DeliveryPtr> running COURIER_GUARDED_BY(mu);  // seated, until their turn ends
  bool stopping COURIER_GUARDED_BY(mu) = false;

  std::atomic<std::uint64_t> next_id{1};
  std::atomic<std::uint64_t> spawned{0};
  std::vector<std::thread> workers;
  seat::Scheduler scheduler;
  std::unique_ptr<seat::WarmPool> warm;
  // Declared last: destroyed first, so its keeper thread (which calls back
  // into the gate) is gone before anything it touches.
  seat::LeaseGate leases;

  void log(const std::string& line) const;
  // The supervisor's log lines, for its notifier thread: a sink that owns a
  // copy of the host's callback, so a call parked in host code past this
  // executor's life still holds what it runs.
  std::function<void(std::string_view)> log_sink() const;
  // Tests only: the worker stops at a named point of a turn.
  void at_point(const DeliveryPtr& d, std::string_view point) const;
  void wake_workers() COURIER_EXCLUDES(mu);
  // One idle worker looks at the queue again, with nothing freed: a queued
  // delivery was cancelled (it held no seat), and its entry goes at the
  // next look. Not every worker, and no held lane tried again.
  void look_again() COURIER_EXCLUDES(mu);

  // executor.cpp: the journal opened, and recovery (J3).
  void open_journal(sys::MonoNs connect_until);
  Result<std::vector<Outcome>> run_recovery();

  // workers.cpp: the worker loop.
  using Events = std::vector<std::pair<DeliveryPtr, DeliveryEvent>>;
  using Finished = std::vector<std::pair<DeliveryPtr, Outcome>>;
  void worker() COURIER_EXCLUDES(mu);
  DeliveryPtr take_runnable(Events& events, Finished& finished) COURIER_REQUIRES(mu);
  void refuse(const DeliveryPtr& d, OutcomeKind kind, const std::string& why, Finished& finished) COURIER_REQUIRES(mu);
  // The seat's release rule (S2, S3) applied to a finished turn, and the
  // turn's delivery out of the running list; wakes the workers.
  void end_turn(const DeliveryPtr& d, Outcome& o) COURIER_EXCLUDES(mu);

  // submission.cpp: a request becomes a queued delivery, or finishes here.
  // `refused`: validate()'s refusal, the reason the delivery ends `failed`.
  void submit(const DeliveryPtr& d, const std::optional<std::string>& refused) COURIER_EXCLUDES(mu);
  bool admit(const DeliveryPtr& d);
  static bool expired_at_submit(const DeliveryPtr& d);
};

}  // namespace courier
