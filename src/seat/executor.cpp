// executor.cpp — lanes, seats and turns: the Executor behind courier.hpp.
//
// A delivery is queued with its absolute deadline fixed at submit (D1). Idle
// workers scan the queue in order and take the first delivery whose lane has
// a free seat in this process and whose lane lock file they can flock across
// processes (S1). The worker then makes the dispatch claim — one CAS that
// either wins (a child may be spawned) or finds the delivery already
// cancelled (nothing is ever spawned: S5) — and supervises the child. The seat
// is released only after the supervisor returns a confirmed outcome (S2); an
// unconfirmed one poisons the lane for the life of the process (S3).
// A scheduler thread expires queued deliveries at their deadline and wakes
// the workers when a lane lock file is closed by another process.
// With a PostgreSQL state, a lane is also a lease that hosts share (L1,
// L3): a worker that has the lane's seat and lock here takes the lease
// before the seat is granted, waiting for a release or the holder's expiry
// plus the margin; the turn's kill instant is min(deadline, lease bound).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "courier/courier.hpp"
#include "journal/journal.hpp"
#include "seat/admission.hpp"
#include "seat/delivery_record.hpp"
#include "seat/lane.hpp"
#include "seat/journal_outbox.hpp"
#include "seat/leases.hpp"
#include "seat/lifecycle.hpp"
#include "seat/pack_engine.hpp"
#include "seat/recovery.hpp"
#include "seat/scheduler_bounds.hpp"
#include "seat/state_journal.hpp"
#include "supervisor/supervisor.hpp"
#include "sys/events.hpp"
#include "sys/flock.hpp"
#include "sys/process.hpp"
#include "sys/random.hpp"
#include "state/state_url.hpp"
#include "supervisor/lease_bound.hpp"
#include "wire/proxy.hpp"
#include "wire/remote.hpp"
#include "wire/text.hpp"

namespace courier {

using supervisor::Supervisor;
using supervisor::SupervisorOptions;

namespace {

// The dispatch claim (S5) and the one writer of the outcome (J5): one
// atomic word. Queued: waiting for a seat; seated: a worker holds the seat
// and has not claimed yet. Whoever moves the word out of queued by a
// compare-and-swap writes the outcome (the revoker, the scheduler, the
// refusing worker); out of seated, the seat's worker always writes it,
// after the seat is released (a revocation there only marks the word), so
// wait() never returns while the seat is still held. Out of claimed, one
// compare-and-swap decides between the child's result (answered: it may
// decide the outcome) and a revocation (stopping: the outcome is not the
// child's result), so revoke() can say which came first. The word and its
// moves are the lifecycle's (seat/lifecycle.hpp): each compare-and-swap
// below is asserted a row of seat::kClaimMoves where it is made.
using enum seat::ClaimWord;
#define COURIER_CLAIM_MOVE(from, to) \
  static_assert(seat::claim_move_allowed(from, to), "a claim word move the lifecycle table does not list")

// How much of a lane lock's holder text a pending event shows.
constexpr std::size_t kMaxHolderShown = 120;

// A few random hex digits that tell this executor from an earlier one of
// the same process id on the same host.
std::string instance_nonce() {
  auto bytes = sys::random_bytes(6);
  if (!bytes) return std::to_string(sys::mono_now_ns());
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : *bytes) {
    const auto u = static_cast<unsigned>(static_cast<unsigned char>(c));
    out.push_back(kHex[u >> 4]);
    out.push_back(kHex[u & 15]);
  }
  return out;
}

std::int64_t holder_pid_from(const std::string& text) {
  const auto pos = text.find("pid=");
  if (pos == std::string::npos) return 0;
  return std::atoll(text.c_str() + pos + 4);
}

// Lane locks of poisoned lanes outlive their executor: the seat is retained
// for the life of the process (S3). Reachable from here, never closed.
std::mutex g_retained_mu;
std::vector<sys::ScopedFd>* g_retained = new std::vector<sys::ScopedFd>();

// Poisoned lanes, by lane key, with why (S3). A fact of the process, not of
// one Executor: the child that could not be confirmed stopped may still be
// working on that remote, whichever Executor (and lane directory) asks next.
// Entries are never removed. A leaf lock: taken under an Executor's mutex,
// never the other way round.
std::mutex g_poisoned_mu;
std::map<std::string, std::string>* g_poisoned = new std::map<std::string, std::string>();

void poison_lane(const std::string& key, const std::string& why) {
  std::lock_guard<std::mutex> lock(g_poisoned_mu);
  g_poisoned->emplace(key, why);  // the first reason stays
}

std::optional<std::string> lane_poisoned_in_process(const std::string& key) {
  std::lock_guard<std::mutex> lock(g_poisoned_mu);
  const auto it = g_poisoned->find(key);
  if (it == g_poisoned->end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::vector<int> retained_lane_lock_fds() {
  std::lock_guard<std::mutex> lock(g_retained_mu);
  std::vector<int> out;
  for (const auto& fd : *g_retained) out.push_back(fd.get());
  return out;
}

Result<std::string> default_lane_dir() { return sys::default_lane_dir(); }

struct DeliveryHandle::Shared {
  std::uint64_t id = 0;
  // Its id, attempt and transitions in the journal (none when it was not
  // admitted to one).
  seat::DeliveryRecord record;
  DeliveryRequest req;
  std::string lane;
  std::string remote;                // canonical: no user information, one spelling
  std::optional<wire::Proxy> proxy;  // the request's proxy, read once (its credentials stay here)
  bool engine_automatic = false;     // the host asked for PackEngine::automatic (the job's pack_auto)
  sys::MonoNs submitted = 0;
  sys::MonoNs deadline = 0;
  // The deadline as the journal records it (wall clock, ms since the epoch):
  // the request's own when it gave one, so a resubmission keeps it exactly.
  std::int64_t deadline_unix_ms = 0;
  // Admitted as the next attempt of one interrupted before its claim (J4).
  bool resumed = false;
  // Across hosts: the lane's lease while this delivery holds it (L3), and
  // the bound its kill instant is capped by (L1), moved by each renewal.
  std::optional<seat::Lease> lease;
  std::shared_ptr<supervisor::LeaseBound> lease_bound;
  std::atomic<int> claim{kQueued};

  mutable std::mutex mu;
  std::condition_variable cv;
  DeliveryState state = DeliveryState::queued;
  std::optional<Outcome> outcome;
  std::shared_ptr<Supervisor> sup;  // set before the claim is attempted
  std::string revoke_reason;
  RevokeCause revoke_by = RevokeCause::caller;
  sys::MonoNs revoke_ns = 0;
  // J1: the revocation's journal entry, written on a thread of its own when
  // the kill may not wait for it; joined before `finished` is written, so
  // a late entry still comes first.
  std::thread revoke_writer;
  bool revoke_unjournalled = false;
  sys::MonoNs revoke_journalled_ns = 0;  // under mu: its entry was taken (durable)
  // Under mu: the first revocation is still deciding what it writes; its
  // entry (when it has one) must precede `finished`, whoever writes that.
  bool revoke_pending = false;
  bool finishing = false;  // under mu: finish() has begun (one writer)
  DeliveryEvent pending;
  std::weak_ptr<Executor::Impl> exec;

  void emit(const DeliveryEvent& e) const {
    if (req.on_event) req.on_event(e);
  }

  ~Shared() {
    if (revoke_writer.joinable()) revoke_writer.join();
  }

  // Publishes the final outcome once; wakes every waiter. Only the writer
  // the claim word names calls it (J5); a second call is a defect, logged
  // and ignored, never a second `finished` entry.
  void finish(Outcome o) {
    std::thread writer;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return !revoke_pending; });
      if (finishing) {
        std::fprintf(stderr, "git-courier: delivery %llu was finished twice; the second outcome (%s) is ignored\n",
                     static_cast<unsigned long long>(id), outcome_name(o.kind));
        return;
      }
      finishing = true;
      writer = std::move(revoke_writer);
      if (revoke_unjournalled && !o.revoke_unjournalled) {
        o.revoke_unjournalled = true;
        o.reason += "; the revocation's intent was not journalled within " +
                    std::to_string(kRevokeJournalBound / sys::kNsPerMs) + " ms, so the kill went ahead without it";
      }
    }
    if (writer.joinable()) writer.join();  // its revoke_requested entry precedes `finished`
    {
      std::lock_guard<std::mutex> lock(mu);
      o.timings.revoke_journalled = revoke_journalled_ns;
      if (revoke_ns != 0) o.timings.revoke = revoke_ns;  // the caller's instant, before its entry
      // A result refused because the revocation came first: the supervisor
      // may not have heard the revocation's words yet.
      if (revoke_ns != 0 && o.kind == OutcomeKind::revoked && !o.revoked_by) {
        o.revoke_cause = revoke_reason;
        o.revoked_by = revoke_by;
      }
    }
    record.finish(o);
    {
      std::lock_guard<std::mutex> lock(mu);
      outcome = std::move(o);
      state = DeliveryState::finished;
    }
    cv.notify_all();
    DeliveryEvent e;
    e.kind = DeliveryEvent::Kind::finished;
    e.delivery = id;
    emit(e);
  }

  // J1: a live revocation's intent is durable before its kill: the entry
  // is written on a thread of its own and the kill waits for it at most
  // kRevokeJournalBound (past it, the outcome says so and the entry still
  // comes before `finished`). A lost lease's kill waits for nothing (L1).
  void revoke_live(const std::string& reason, RevokeCause cause) {
    if (!record.journalled()) return;
    auto written = std::make_shared<std::promise<void>>();
    auto done = written->get_future();
    std::thread writer([this, reason, cause, written] {
      journal_revocation(reason, cause, true);
      written->set_value();
    });
    {
      std::lock_guard<std::mutex> lock(mu);
      revoke_writer = std::move(writer);
    }
    if (cause == RevokeCause::lease_lost) return;
    if (done.wait_for(std::chrono::nanoseconds(kRevokeJournalBound)) != std::future_status::ready) {
      std::lock_guard<std::mutex> lock(mu);
      revoke_unjournalled = true;
    }
  }

  // J1, J5: authority said no, and the supervisor kills once this returns:
  // the revocation (cause authority, final under its id) is journalled
  // first, within kRevokeJournalBound, like a caller's.
  void authority_revoked(const std::string& words) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (revoke_ns != 0 || finishing) return;  // a revocation is already on its way
      revoke_ns = sys::mono_now_ns();
      revoke_reason = words;
      revoke_by = RevokeCause::authority;
      revoke_pending = true;
    }
    revoke_live(words, RevokeCause::authority);
    {
      std::lock_guard<std::mutex> lock(mu);
      revoke_pending = false;
    }
    cv.notify_all();
  }

  // The revoke_requested entry (durable), and when it was taken.
  void journal_revocation(const std::string& reason, RevokeCause cause, bool claimed) {
    if (!record.revoke_requested(reason, cause, claimed)) return;
    std::lock_guard<std::mutex> lock(mu);
    revoke_journalled_ns = sys::mono_now_ns();
  }

  Outcome never_dispatched(OutcomeKind kind, std::string reason) const {
    Outcome o;
    o.kind = kind;
    o.reason = std::move(reason);
    o.deadline = deadline;
    o.timings.submitted = submitted;
    o.timings.revoke = revoke_ns;
    o.bytes_sent = 0;
    if (revoke_ns != 0) {
      o.revoke_cause = revoke_reason;
      o.revoked_by = revoke_by;
    }
    return o;
  }
};

struct Lane {
  std::optional<sys::LockFile> file;  // this executor's one description of the lane lock
  int watch = -1;
  std::uint64_t holder = 0;  // delivery holding the seat here (0: free)
  std::int64_t holder_child = 0;
  std::uint64_t poisoned_by = 0;  // unconfirmed delivery that retains the seat forever
};

// A child spawned ahead of need, supervised by a thread of its own (the
// spawning thread, which must outlive the child).
struct WarmSlot {
  std::shared_ptr<Supervisor> sup;
  std::thread thread;
  std::promise<Outcome> done;
  std::future<Outcome> outcome = done.get_future();

  // Kills and confirms a warm child nobody will use, and joins its thread.
  void retire(const std::string& why) {
    sup->revoke(why);
    if (thread.joinable()) thread.join();
  }
  // Its supervisor has returned: the child is gone (it died before any job).
  bool gone() const { return outcome.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
  // Said hello and still there: a job can be handed to it.
  bool usable() const { return sup->ready() && !gone(); }
};

struct Executor::Impl {
  ExecutorOptions opt;
  // The warm children (under mu): at most warm_target(), plus how many are
  // being spawned to join them.
  std::vector<std::shared_ptr<WarmSlot>> warm;
  std::size_t warm_starting = 0;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<DeliveryHandle::Shared>> queue;
  std::map<std::string, Lane> lanes;
  std::vector<std::shared_ptr<DeliveryHandle::Shared>> running;
  std::atomic<std::uint64_t> next_id{1};
  std::atomic<std::uint64_t> spawned{0};
  bool stopping = false;
  std::vector<std::thread> workers;
  std::thread scheduler;
  std::optional<sys::CloseWatcher> watcher;
  Result<std::shared_ptr<const sys::LaneDir>> lane_dir = fail(Errc::invalid_argument, "no lane directory");
  std::optional<sys::EventFd> scheduler_wake;
  std::optional<sys::TimerFd> expiry_timer;
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
  // A PostgreSQL state: the lanes are leases too (L1, L3). lease_refusal
  // says why they cannot be used (every delivery is then refused).
  bool lease_wanted = false;
  std::string lease_refusal;
  // This host's name, as leases and the journal show it (host_id, or the
  // host name), and this executor among every host's.
  std::string host;
  std::string instance;

  // Under mu: bumped at each announced release (lease waiters look again),
  // and the delivery holding each lane's lease here.
  std::uint64_t lease_gen = 0;
  std::map<std::string, std::weak_ptr<DeliveryHandle::Shared>> lease_holders;
  // A seated delivery waiting for its lane's lease (L3), and when to look
  // again: the lease generation it saw, its wake-up instant, and the
  // retry for a database that cannot be reached (doubling up to the
  // longest, bounded by the deadline).
  struct LeaseWait {
    static constexpr sys::MonoNs kFirstRetry = 100 * sys::kNsPerMs;
    static constexpr sys::MonoNs kLongestRetry = 2'000 * sys::kNsPerMs;
    std::shared_ptr<DeliveryHandle::Shared> d;
    std::uint64_t gen = 0;
    sys::MonoNs wake_at = 0;
    sys::MonoNs retry = kFirstRetry;
  };
  // Under mu: seated deliveries waiting for their lane's lease, parked
  // without a worker (park_lease_wait).
  std::vector<LeaseWait> lease_waits;
  // Declared last: destroyed first, so its thread (which calls back into
  // this Impl) is gone before anything it touches.
  std::unique_ptr<seat::LeaseKeeper> leases;

  void log(const std::string& line) const {
    if (opt.on_log) {
      opt.on_log(line);
    } else {
      std::fprintf(stderr, "git-courier: %s\n", line.c_str());
    }
  }

  // The supervisor's log lines, for its notifier thread: a sink that owns a
  // copy of the host's callback, so a call parked in host code past this
  // executor's life still holds what it runs.
  std::function<void(std::string_view)> log_sink() const {
    return [on_log = opt.on_log](std::string_view line) {
      if (on_log) {
        on_log(line);
      } else {
        std::fprintf(stderr, "git-courier: %.*s\n", static_cast<int>(line.size()), line.data());
      }
    };
  }

  // Under mu. Opens the lane's lock file (once) and its close watch.
  Result<Lane*> lane_for(const std::string& key) {
    Lane& lane = lanes[key];
    if (!lane.file) {
      if (!lane_dir) return tl::unexpected(lane_dir.error());
      auto f = sys::LockFile::open(*lane_dir, seat::lane_lock_name(key));
      if (!f) return tl::unexpected(f.error());
      lane.file = std::move(*f);
      if (watcher) {
        if (auto wd = watcher->watch(*lane.file)) lane.watch = *wd;
      }
    }
    return &lane;
  }

  // Under mu: who holds this lane, as a pending event.
  DeliveryEvent pending_event(const DeliveryHandle::Shared& d, const Lane& lane) const {
    DeliveryEvent e;
    e.kind = DeliveryEvent::Kind::pending;
    e.delivery = d.id;
    if (lane.holder != 0) {
      e.holder_delivery = lane.holder;
      e.holder_pid = lane.holder_child;
      e.holder = "delivery " + std::to_string(lane.holder) + " of this process";
    } else if (lane.file) {
      // Another user of a shared lane directory may have written it: the
      // pid is parsed from the raw text, the text itself is shown escaped.
      const std::string raw = lane.file->read_holder();
      e.holder_pid = holder_pid_from(raw);
      e.holder = wire::printable(raw, kMaxHolderShown);
    }
    return e;
  }

  // Under mu: take the first queued delivery whose seat is free here and
  // whose lane lock we can take. Deliveries that cannot be run get their
  // pending facts refreshed (returned in `events` to emit without the lock).
  using Events = std::vector<std::pair<std::shared_ptr<DeliveryHandle::Shared>, DeliveryEvent>>;
  using Finished = std::vector<std::pair<std::shared_ptr<DeliveryHandle::Shared>, Outcome>>;

  std::shared_ptr<DeliveryHandle::Shared> take_runnable(Events& events, Finished& finished) {
    for (auto it = queue.begin(); it != queue.end();) {
      auto d = *it;
      if (d->claim.load() != kQueued) {
        it = queue.erase(it);
        continue;
      }
      auto lane = lane_for(d->lane);
      if (!lane) {
        it = queue.erase(it);
        refuse(d, OutcomeKind::failed, "cannot use the lane lock: " + lane.error().message, finished);
        continue;
      }
      Lane& l = **lane;
      if (auto why = poisoned(d->lane, &l)) {
        it = queue.erase(it);
        refuse(d, OutcomeKind::lane_poisoned, *why, finished);
        continue;
      }
      if (l.holder == 0) {
        auto locked = l.file->try_lock();
        int queued = kQueued;
        COURIER_CLAIM_MOVE(kQueued, kSeated);
        if (locked && *locked && !d->claim.compare_exchange_strong(queued, kSeated)) {
          // Revoked or expired a moment ago: its writer finishes it.
          l.file->unlock();
          it = queue.erase(it);
          continue;
        }
        if (locked && *locked) {
          l.holder = d->id;
          l.holder_child = 0;
          l.file->write_holder("pid=" + std::to_string(sys::self_pid()) + " delivery=" + std::to_string(d->id) +
                               " lane=" + d->lane);
          it = queue.erase(it);
          return d;
        }
      }
      DeliveryEvent e = pending_event(*d, l);
      {
        std::lock_guard<std::mutex> lock(d->mu);
        const bool changed = d->state != DeliveryState::pending || d->pending.holder != e.holder ||
                             d->pending.holder_pid != e.holder_pid;
        d->state = DeliveryState::pending;
        d->pending = e;
        if (changed) events.emplace_back(d, e);
      }
      ++it;
    }
    return nullptr;
  }

  std::string poisoned_reason(const std::string& key, const Lane& l) const {
    return "lane " + key + " is poisoned: delivery " + std::to_string(l.poisoned_by) +
           " could not confirm its child's stop, so the seat is retained for the life of this process";
  }

  // Why this lane is refused, if it is poisoned: by a delivery of this
  // executor, or by one of any other executor of this process (S3).
  std::optional<std::string> poisoned(const std::string& key, const Lane* l) const {
    if (l && l->poisoned_by != 0) return poisoned_reason(key, *l);
    return lane_poisoned_in_process(key);
  }

  // Refuses a queued delivery that never claimed (no child, no seat).
  // finish() emits host callbacks, so the caller runs it after unlocking.
  void refuse(const std::shared_ptr<DeliveryHandle::Shared>& d, OutcomeKind kind, const std::string& why,
              Finished& finished) {
    int expected = kQueued;
    COURIER_CLAIM_MOVE(kQueued, kRefused);
    if (!d->claim.compare_exchange_strong(expected, kRefused)) return;
    finished.emplace_back(d, d->never_dispatched(kind, why));
  }

  // Under mu: the seat's release rule (S2, S3) applied to a finished turn.
  void end_turn(const std::string& key, std::uint64_t id, const Outcome& o) {
    Lane& l = lanes[key];
    if (l.holder != id) return;
    if (o.seat() == SeatDisposition::release) {
      l.holder = 0;
      l.holder_child = 0;
      l.file->write_holder("");
      l.file->unlock();
    } else {
      // Retained: the in-process seat and the lock file description stay
      // held until this process exits.
      l.poisoned_by = id;
      poison_lane(key, poisoned_reason(key, l));
      log("lane " + key + " poisoned by delivery " + std::to_string(id) + ": " + o.reason);
    }
    cv.notify_all();
  }

  // How many warm children to keep: warm_children, or one for warm_child.
  std::size_t warm_target() const {
    return std::max(opt.warm_children, opt.warm_child ? std::size_t{1} : std::size_t{0});
  }

  // Under mu: whether one more warm child has a place in the pool.
  bool warm_has_room() const { return !stopping && warm.size() + warm_starting < warm_target(); }

  // Under mu: how many warm children could take a job now.
  std::size_t warm_usable() const {
    return static_cast<std::size_t>(
        std::count_if(warm.begin(), warm.end(), [](const std::shared_ptr<WarmSlot>& w) { return w->usable(); }));
  }

  // Spawns one more warm child (in the background) when the pool has room
  // for it: the room is reserved first, so concurrent calls never spawn a
  // child only to retire it.
  void start_warm() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!warm_has_room()) return;
      ++warm_starting;
    }
    SupervisorOptions wo;
    wo.warm = true;
    wo.child_program = opt.child_program;
    wo.cgroup = opt.cgroup;
    wo.subreaper = opt.subreaper;
    wo.reap_bound = opt.reap_bound;
    wo.eof_bound = opt.eof_bound;
    wo.on_stderr = opt.on_child_stderr;
    wo.on_event = log_sink();
    // Its hello makes it ready: wake anyone waiting for a warm child.
    wo.on_ready = [this] {
      std::lock_guard<std::mutex> lock(mu);
      cv.notify_all();
    };
    auto slot = std::make_shared<WarmSlot>();
    slot->sup = std::make_shared<Supervisor>(std::move(wo));
    slot->thread = std::thread([s = slot.get()] { s->done.set_value(s->sup->run()); });
    {
      std::lock_guard<std::mutex> lock(mu);
      --warm_starting;
      if (!stopping) {
        warm.push_back(std::move(slot));
        return;
      }
    }
    slot->retire("the executor is shutting down");
  }

  // Makes `sup` the one a revocation of `d` reaches, and passes on a
  // revocation that arrived while `d` had none (S5: at any instant after
  // the claim, whatever its words, even none). One still journalling its
  // intent kills by itself once done (J1): revoke() reads d->sup after.
  static void adopt(const std::shared_ptr<DeliveryHandle::Shared>& d, const std::shared_ptr<Supervisor>& sup) {
    bool revoked = false;
    std::string reason;
    RevokeCause cause = RevokeCause::caller;
    {
      std::lock_guard<std::mutex> lock(d->mu);
      d->sup = sup;
      revoked = d->revoke_ns != 0 && !d->revoke_pending;
      reason = d->revoke_reason;
      cause = d->revoke_by;
    }
    if (revoked) sup->revoke(reason, cause);
  }

  // Tests only: the worker stops at a named point of a turn.
  void at_point(const std::shared_ptr<DeliveryHandle::Shared>& d, std::string_view point) const {
    if (opt.at_point_for_tests) opt.at_point_for_tests(d->id, point);
  }

  // Puts an unused warm child back in the pool; one that has no place
  // there (the executor is stopping, or new ones took its place) is retired.
  void keep_warm(std::shared_ptr<WarmSlot> slot) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (warm_has_room()) {
        warm.push_back(std::move(slot));
        cv.notify_all();
        return;
      }
    }
    slot->retire("not needed");
  }

  // A ready warm child, taken out of the pool (or null). Warm children that
  // died waiting are removed on the way (their stop is confirmed by their
  // own supervisor) and replaced.
  std::shared_ptr<WarmSlot> take_warm() {
    std::shared_ptr<WarmSlot> got;
    std::vector<std::shared_ptr<WarmSlot>> dead;
    {
      std::lock_guard<std::mutex> lock(mu);
      for (auto it = warm.begin(); it != warm.end();) {
        if ((*it)->gone()) {
          dead.push_back(std::move(*it));
        } else if (!got && (*it)->sup->ready()) {
          got = std::move(*it);
        } else {
          ++it;
          continue;
        }
        it = warm.erase(it);
      }
    }
    for (auto& slot : dead) {
      slot->retire("gone before any job");
      start_warm();
    }
    return got;
  }

  // The supervisor's options for one turn: the delivery's job and deadline
  // (D1), the executor's bounds, the host's callbacks, and the lane lock
  // the child inherits (S6).
  SupervisorOptions turn_options(const std::shared_ptr<DeliveryHandle::Shared>& d) {
    SupervisorOptions so;
    so.job.repo = d->req.repo;
    so.job.remote = d->remote;
    so.job.ref = d->req.ref;
    so.job.oid = d->req.oid;
    so.job.update = d->req.update;
    so.job.expect_old = d->req.expect_old;
    so.job.authenticated = static_cast<bool>(d->req.mint);
    so.job.bind_payload = so.job.authenticated && d->req.mint_binds_payload;
    so.job.ca_file = d->req.ca_file;
    if (d->proxy) {
      so.job.proxy = d->proxy->url;
      so.proxy_authorization = d->proxy->authorization;
    }
    so.job.allow_http_loopback = d->req.allow_http_loopback;
    so.job.remote_progress = d->req.remote_progress;
    if (d->req.pack_engine == PackEngine::git) {
      so.job.pack_git = d->req.git_program;
      so.job.pack_auto = d->engine_automatic;
    }
    so.deadline = d->deadline;
    if (d->lease) so.lease = d->lease_bound;  // L1: killed at min(deadline, lease bound)
    so.child_program = opt.child_program;
    so.cgroup = opt.cgroup;
    so.subreaper = opt.subreaper;
    so.reap_bound = opt.reap_bound;
    so.eof_bound = opt.eof_bound;
    so.mint = d->req.mint;
    so.authority = d->req.authority;
    so.fence = fence_of(*d);  // L3: every mint carries the lease's fence
    so.on_stderr = opt.on_child_stderr;
    so.result_first = result_first(d);
    {
      std::lock_guard<std::mutex> lock(mu);
      Lane& l = lanes[d->lane];
      so.inherit_fd = l.file->fd();  // S6: the child holds the lane lock too
    }
    std::weak_ptr<DeliveryHandle::Shared> weak = d;
    so.on_progress = progress_relay(weak);
    so.on_event = log_sink();
    so.on_spawned = spawn_observer(weak);
    if (d->record.journalled()) {
      so.before_post = write_ahead(weak);
      so.before_authority_revoke = [weak](const std::string& words) {
        if (auto s = weak.lock()) s->authority_revoked(words);
      };
    }
    return so;
  }

  // J5: the child's result against a revocation, on the claim word: the
  // first to move it out of claimed wins (a repeated result stays answered).
  static std::function<bool()> result_first(const std::weak_ptr<DeliveryHandle::Shared>& weak) {
    return [weak] {
      auto s = weak.lock();
      if (!s) return true;
      int expected = kClaimed;
      COURIER_CLAIM_MOVE(kClaimed, kAnswered);
      return s->claim.compare_exchange_strong(expected, kAnswered) || expected == kAnswered;
    };
  }

  // J1: post_started durable before the child hears it may begin the POST,
  // with the old id it will compare against (and the journal keeps for a
  // compare-and-swap re-delivery, J4).
  static std::function<Result<void>(const std::optional<std::string>&)> write_ahead(
      const std::weak_ptr<DeliveryHandle::Shared>& weak) {
    return [weak](const std::optional<std::string>& old_oid) -> Result<void> {
      auto s = weak.lock();
      if (!s) return fail(Errc::journal_failed, "the delivery is gone");
      return s->record.post_started(old_oid);
    };
  }

  // The child's progress, as the delivery's progress events.
  static std::function<void(const protocol::Progress&)> progress_relay(
      const std::weak_ptr<DeliveryHandle::Shared>& weak) {
    return [weak](const protocol::Progress& p) {
      if (auto s = weak.lock()) {
        if (p.old_oid) s->record.advertised(*p.old_oid);  // J4: journalled at the advertisement
        DeliveryEvent e;
        e.kind = DeliveryEvent::Kind::progress;
        e.delivery = s->id;
        e.phase = p.phase;
        e.done = p.done;
        e.total = p.total;
        e.text = p.message.value_or("");
        s->emit(e);
      }
    };
  }

  // The child exists: its pid goes into the lane's holder record (while
  // this delivery still holds the seat) and out as the dispatched event.
  std::function<void(std::int64_t)> spawn_observer(const std::weak_ptr<DeliveryHandle::Shared>& weak) {
    return [this, weak](std::int64_t pid) {
      auto s = weak.lock();
      if (!s) return;
      {
        std::lock_guard<std::mutex> lock(mu);
        Lane& l = lanes[s->lane];
        // Observers run off the supervising loop: this may come late, after
        // the turn ended, and must not write over the next holder's record.
        if (l.holder == s->id) {
          l.holder_child = pid;
          l.file->write_holder("pid=" + std::to_string(sys::self_pid()) + " delivery=" + std::to_string(s->id) +
                               " child=" + std::to_string(pid) + " lane=" + s->lane);
        }
      }
      // Recovery finds this child by pid + start time + boot id (J3).
      s->record.dispatched(pid);
      DeliveryEvent e;
      e.kind = DeliveryEvent::Kind::dispatched;
      e.delivery = s->id;
      e.child_pid = pid;
      s->emit(e);
    };
  }

  // The dispatch claim (S5). True: this turn may have a child. False:
  // cancellation (or the deadline) won the race, no child was or will be
  // spawned, the work provably never started, so the seat went straight
  // back and the delivery is finished; a warm child taken for it stays warm.
  bool claim(const std::shared_ptr<DeliveryHandle::Shared>& d, std::shared_ptr<WarmSlot>& warm_slot) {
    int expected = kSeated;
    // D1: a deadline that passed while it waited for its seat is expired
    // here, not claimed: no claimed entry, no child (warm or cold) for it.
    COURIER_CLAIM_MOVE(kSeated, kExpired);
    if (sys::mono_now_ns() >= d->deadline && d->claim.compare_exchange_strong(expected, kExpired)) {
      expected = kExpired;
    }
    COURIER_CLAIM_MOVE(kSeated, kClaimed);
    if (expected != kSeated || !d->claim.compare_exchange_strong(expected, kClaimed)) {
      // Seated: this worker writes the outcome whoever moved the word.
      if (warm_slot) keep_warm(std::move(warm_slot));
      Outcome o;
      {
        std::lock_guard<std::mutex> lock(d->mu);
        o = d->never_dispatched(
            expected == kExpired ? OutcomeKind::deadline_killed : OutcomeKind::cancelled_no_dispatch,
            expected == kExpired ? "the deadline passed before dispatch"
                                 : "revoked before dispatch: " + d->revoke_reason);
      }
      drop_lease(d, o);
      {
        std::lock_guard<std::mutex> lock(mu);
        end_turn(d->lane, d->id, o);
      }
      d->finish(std::move(o));
      return false;
    }
    {
      std::lock_guard<std::mutex> lock(d->mu);
      d->state = DeliveryState::running;
    }
    d->record.claimed(fence_of(*d));
    at_point(d, "claimed");
    return true;
  }

  // A claimed turn on a warm child: the job is handed to it, and its
  // outcome is the turn's. Null when the warm child did not run this
  // delivery (revoked before the hand-over, refused the job, or gone before
  // it took it): `sup` is then a fresh cold supervisor that a revocation of
  // `d` reaches. Spawns the warm child that takes its place in the pool.
  std::optional<Outcome> run_warm(const std::shared_ptr<DeliveryHandle::Shared>& d, const SupervisorOptions& so,
                                  std::shared_ptr<Supervisor>& sup, std::shared_ptr<WarmSlot> warm_slot) {
    // A revocation that came in after the claim but before the job was
    // handed over: the cold supervisor below ends it without a spawn, and
    // the warm child stays warm for the next delivery.
    bool revoked_already = false;
    {
      std::lock_guard<std::mutex> lock(d->mu);
      revoked_already = d->revoke_ns != 0;
    }
    if (revoked_already) {
      keep_warm(std::move(warm_slot));
      sup = std::make_shared<Supervisor>(so);
      adopt(d, sup);
      return std::nullopt;
    }
    std::optional<Outcome> o;
    if (sup->assign(so)) {
      at_point(d, "assigned");
      adopt(d, sup);
      // Its place in the pool is filled now, while it works: the next
      // delivery finds a warm child ready without waiting for this one.
      start_warm();
      o = warm_slot->outcome.get();
      warm_slot->thread.join();
      // Assigned but gone before it took the job: it never had this
      // delivery, which then gets a cold child like any other.
      if (!o->warm) o.reset();
    } else {
      warm_slot->retire("could not take a job");
      start_warm();
    }
    if (!o) {
      sup = std::make_shared<Supervisor>(so);
      adopt(d, sup);
    }
    return o;
  }

  // L3: one try for the lane's lease, which this delivery's seat and lock
  // here already cover on this host. Taken: the lease is held and kept.
  // Ended: the delivery finished without one (revoked, deadline) and its
  // seat here is released. Waiting: held elsewhere, or the database cannot
  // be reached; `w` says when to look again (park_lease_wait).
  enum class LeaseStep { taken, ended, waiting };

  LeaseStep take_lease(LeaseWait& w) {
    const auto& d = w.d;
    {
      std::lock_guard<std::mutex> lock(mu);
      w.gen = lease_gen;
    }
    if (d->claim.load() != kSeated) return end_without_lease(d, cancelled_while_seated(d));
    std::string holder;
    {
      std::lock_guard<std::mutex> lock(d->mu);
      holder = d->pending.holder;
    }
    if (sys::mono_now_ns() >= d->deadline) {
      int expected = kSeated;
      COURIER_CLAIM_MOVE(kSeated, kExpired);
      if (!d->claim.compare_exchange_strong(expected, kExpired)) return end_without_lease(d, cancelled_while_seated(d));
      return end_without_lease(d, d->never_dispatched(OutcomeKind::deadline_killed,
                                                      "the deadline passed while waiting for the lane's lease" +
                                                          (holder.empty() ? std::string() : " (" + holder + ")") +
                                                          "; no child was spawned"));
    }
    auto got = leases->try_take(d->lane, d->record.id(), d->deadline);
    if (got) {
      if (auto* lease = std::get_if<seat::Lease>(&*got)) {
        d->lease = *lease;
        d->lease_bound = std::make_shared<supervisor::LeaseBound>(lease->bound);
        {
          std::lock_guard<std::mutex> lock(mu);
          lease_holders[d->lane] = d;
        }
        leases->keep(*lease);
        return LeaseStep::taken;
      }
    }
    lease_pending(w, got);
    return LeaseStep::waiting;
  }

  // A lease not taken: the pending event names why (emitted when that
  // changed), and `w` when to look again: the holder's expiry plus the
  // margin by the database's clock (an expiring lease announces nothing),
  // or, for a database that cannot be reached, a retry doubling up to the
  // longest (queued work waits for it; only live work stops when the
  // database is lost, L1); never past the deadline.
  void lease_pending(LeaseWait& w, const Result<std::variant<seat::Lease, seat::LeaseHeld>>& got) {
    DeliveryEvent e;
    e.kind = DeliveryEvent::Kind::pending;
    e.delivery = w.d->id;
    if (got) {
      const auto& held = std::get<seat::LeaseHeld>(*got);
      e.holder = wire::printable("held by " + held.holder.describe(), kMaxHolderShown);
      w.wake_at = held.free_at;
      w.retry = LeaseWait::kFirstRetry;
    } else {
      e.holder = wire::printable("the lanes' database cannot be reached: " + got.error().message, kMaxHolderShown);
      w.wake_at = sys::mono_now_ns() + w.retry;
      w.retry = std::min(w.retry * 2, LeaseWait::kLongestRetry);
    }
    w.wake_at = std::min(w.wake_at, w.d->deadline);
    bool changed = false;
    {
      std::lock_guard<std::mutex> lock(w.d->mu);
      changed = w.d->state != DeliveryState::pending || w.d->pending.holder != e.holder;
      w.d->state = DeliveryState::pending;
      w.d->pending = e;
    }
    if (changed) w.d->emit(e);
  }

  // No wait holds a worker: a delivery waiting for its lease keeps its seat
  // here and its claim word (seated) but gives its worker back. A worker
  // resumes it (take_lease_wait) at its wake-up instant, at an announced
  // release (lease_gen), or when it is revoked (the claim word moved).
  void park_lease_wait(LeaseWait w) {
    std::lock_guard<std::mutex> lock(mu);
    lease_waits.push_back(std::move(w));
    cv.notify_all();  // idle workers sleep until the earliest wake-up
  }

  // Under mu: a parked lease wait that is due, taken out of the list.
  std::optional<LeaseWait> take_lease_wait() {
    const sys::MonoNs now = sys::mono_now_ns();
    for (auto it = lease_waits.begin(); it != lease_waits.end(); ++it) {
      if (now >= it->wake_at || it->gen != lease_gen || it->d->claim.load() != kSeated) {
        LeaseWait w = std::move(*it);
        lease_waits.erase(it);
        return w;
      }
    }
    return std::nullopt;
  }

  // Under mu: a worker with nothing to do sleeps until notified, or until
  // the earliest parked lease wait's wake-up.
  void wait_for_work(std::unique_lock<std::mutex>& lock) {
    if (lease_waits.empty()) {
      cv.wait(lock);
      return;
    }
    sys::MonoNs first = lease_waits.front().wake_at;
    for (const auto& w : lease_waits) first = std::min(first, w.wake_at);
    cv.wait_until(lock, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(first)));
  }

  // The outcome of a seated delivery revoked before its claim: this
  // worker writes it (the revoker only marked the claim word).
  static Outcome cancelled_while_seated(const std::shared_ptr<DeliveryHandle::Shared>& d) {
    std::lock_guard<std::mutex> lock(d->mu);
    return d->never_dispatched(OutcomeKind::cancelled_no_dispatch, "revoked before dispatch: " + d->revoke_reason);
  }

  // A turn that ends before its lease was taken: the seat here goes back,
  // then the outcome is published (wait() returns after the release).
  LeaseStep end_without_lease(const std::shared_ptr<DeliveryHandle::Shared>& d, Outcome o) {
    {
      std::lock_guard<std::mutex> lock(mu);
      end_turn(d->lane, d->id, o);
      running.erase(std::remove(running.begin(), running.end(), d), running.end());
    }
    d->finish(std::move(o));
    return LeaseStep::ended;
  }

  // The turn is over: its lease is released when the seat is (the stop is
  // confirmed, S2), and kept renewed for the life of this executor when the
  // seat is retained (the child may still be working on that remote).
  void drop_lease(const std::shared_ptr<DeliveryHandle::Shared>& d, const Outcome& o) {
    if (!d->lease) return;
    const bool release = o.seat() == SeatDisposition::release;
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = lease_holders.find(d->lane);
      if (it != lease_holders.end() && it->second.lock() == d) lease_holders.erase(it);
    }
    if (!release) return;
    if (auto r = leases->drop(d->lane, d->lease->fence, true); !r) {
      log("lane " + d->lane + ": the lease (fence " + std::to_string(d->lease->fence) +
          ") could not be released; it expires by itself: " + r.error().message);
    }
  }

  // The fence this turn's tokens carry and its claim journals (L3): the
  // lane's lease's, unless a test forces one.
  static std::optional<std::int64_t> fence_of(const DeliveryHandle::Shared& d) {
    if (d.req.fence_for_tests) return d.req.fence_for_tests;
    if (d.lease) return d.lease->fence;
    return std::nullopt;
  }

  // The keeper's word on a held lease: a confirmed renewal moves the lease
  // bound (L1); a lost one stops the delivery now (cause lease_lost: the
  // kill waits for no journal, since a host that lost its database cannot
  // journal first).
  std::shared_ptr<DeliveryHandle::Shared> lease_holder(const std::string& lane, std::int64_t fence) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = lease_holders.find(lane);
    if (it == lease_holders.end()) return nullptr;
    auto d = it->second.lock();
    if (!d || !d->lease || d->lease->fence != fence) return nullptr;
    return d;
  }

  void lease_renewed(const std::string& lane, std::int64_t fence, sys::MonoNs bound) {
    if (auto d = lease_holder(lane, fence)) d->lease_bound->move_to(bound);
  }

  void lease_lost(const std::string& lane, std::int64_t fence, const std::string& why) {
    if (auto d = lease_holder(lane, fence)) {
      DeliveryHandle(d).revoke(std::string(kLeaseLostCause) + ": " + why, RevokeCause::lease_lost);
    } else {
      log("lane " + lane + ": the lease (fence " + std::to_string(fence) + ") was lost: " + why);
    }
  }

  // A PostgreSQL state makes the lanes leases too. Leases that cannot be
  // used refuse every delivery (admit()), since a constructor has no error
  // to return and a delivery must never run unfenced when leases were asked.
  void open_leases() {
    if (opt.state.empty()) return;
    auto url = state::parse_state_url(opt.state);
    if (!url || url->kind != state::StateUrl::Kind::postgres) return;  // a bad URL is the journal's refusal
    lease_wanted = true;
    if (opt.lease_margin < opt.reap_bound + opt.eof_bound) {
      lease_refusal = "the lease margin (" + std::to_string(opt.lease_margin / sys::kNsPerMs) +
                      " ms) is shorter than a stop's confirmation bound (reap + end of file: " +
                      std::to_string((opt.reap_bound + opt.eof_bound) / sys::kNsPerMs) + " ms)";
      log(lease_refusal);
      return;
    }
    seat::LeaseConfig c;
    c.conninfo = url->conninfo;
    c.host = host;
    c.instance = instance;
    c.ttl = opt.lease_ttl;
    c.margin = opt.lease_margin;
    seat::LeaseKeeper::Callbacks cb;
    cb.released = [this](const std::string&) {
      std::lock_guard<std::mutex> lock(mu);
      ++lease_gen;
      cv.notify_all();
    };
    cb.renewed = [this](const std::string& lane, std::int64_t fence, sys::MonoNs bound) {
      lease_renewed(lane, fence, bound);
    };
    cb.lost = [this](const std::string& lane, std::int64_t fence, const std::string& why) {
      lease_lost(lane, fence, why);
    };
    auto k = seat::LeaseKeeper::open(std::move(c), std::move(cb));
    if (!k) {
      lease_refusal = "the lanes' leases cannot be used (" + url->redacted + "): " + k.error().message;
      log(lease_refusal);
      return;
    }
    leases = std::move(*k);
  }

  // A turn starts (or resumes from a parked lease wait): with leases, the
  // lease first; one held elsewhere parks the delivery and frees the worker.
  void start_turn(LeaseWait w) {
    if (leases) {
      const LeaseStep step = take_lease(w);
      if (step == LeaseStep::ended) return;
      if (step == LeaseStep::waiting) {
        park_lease_wait(std::move(w));
        return;
      }
    }
    run_turn(w.d);
  }

  void run_turn(const std::shared_ptr<DeliveryHandle::Shared>& d) {
    const sys::MonoNs seat_at = sys::mono_now_ns();
    DeliveryEvent granted;
    granted.kind = DeliveryEvent::Kind::seat_granted;
    granted.delivery = d->id;
    d->emit(granted);  // the witness point: the seat is ours from here

    const SupervisorOptions so = turn_options(d);
    std::shared_ptr<WarmSlot> warm_slot = take_warm();
    auto sup = warm_slot ? warm_slot->sup : std::make_shared<Supervisor>(so);
    {
      // A warm child becomes this delivery's only once assigned: a
      // revocation before that must not cost the spare child its life.
      std::lock_guard<std::mutex> lock(d->mu);
      d->sup = warm_slot ? nullptr : sup;
    }
    if (!claim(d, warm_slot)) return;
    std::optional<Outcome> warm_outcome;
    if (warm_slot) warm_outcome = run_warm(d, so, sup, std::move(warm_slot));
    // Cold: the supervisor made before the claim, which a revocation after
    // the claim reaches through d->sup.
    Outcome o = warm_outcome ? std::move(*warm_outcome) : sup->run();
    o.timings.submitted = d->submitted;
    o.timings.seat = seat_at;
    if (o.dispatched) spawned.fetch_add(1);
    drop_lease(d, o);
    {
      std::lock_guard<std::mutex> lock(mu);
      end_turn(d->lane, d->id, o);
      running.erase(std::remove(running.begin(), running.end(), d), running.end());
    }
    {
      std::lock_guard<std::mutex> lock(d->mu);
      d->sup.reset();
    }
    d->finish(std::move(o));
  }

  void worker() {
    for (;;) {
      std::optional<LeaseWait> resumed;
      std::shared_ptr<DeliveryHandle::Shared> d;
      Events events;
      Finished finished;
      {
        std::unique_lock<std::mutex> lock(mu);
        for (;;) {
          resumed = take_lease_wait();
          if (resumed) break;
          // A parked lease wait keeps the workers: a revoked one (shutdown
          // revokes them all) is finished by the worker that resumes it.
          if (stopping && queue.empty() && lease_waits.empty()) return;
          d = take_runnable(events, finished);
          if (d) {
            running.push_back(d);
            break;
          }
          if (!events.empty() || !finished.empty()) break;
          // take_runnable may just have dropped the last stale entry: look
          // again before sleeping, or a shutdown notified earlier is lost.
          if (stopping && queue.empty() && lease_waits.empty()) return;
          wait_for_work(lock);
        }
      }
      for (auto& [who, o] : finished) who->finish(std::move(o));
      for (auto& [who, e] : events) who->emit(e);
      if (resumed) {
        start_turn(std::move(*resumed));
      } else if (d) {
        start_turn(LeaseWait{d});
      }
    }
  }

  // Expires queued deliveries at their deadline; wakes workers when a lane
  // lock file is closed elsewhere (a holder in another process let go).
  void schedule() {
    bool poll_failing = false;
    for (;;) {
      Finished finished;
      const std::optional<sys::MonoNs> next = expire_queued(finished);
      if (!next) return;
      for (auto& [who, o] : finished) who->finish(std::move(o));
      scheduler_wait(*next, poll_failing);
    }
  }

  // The scheduler's scan: finishes every queued delivery whose deadline has
  // passed (into `finished`, published by the caller outside the lock) and
  // answers the earliest deadline still queued (kForever: none), or nothing
  // when the executor is stopping and the queue is empty.
  std::optional<sys::MonoNs> expire_queued(Finished& finished) {
    sys::MonoNs next = sys::kForever;
    std::lock_guard<std::mutex> lock(mu);
    if (stopping && queue.empty()) return std::nullopt;
    const sys::MonoNs now = sys::mono_now_ns();
    for (auto& d : queue) {
      if (d->claim.load() != kQueued) continue;
      if (d->deadline > now) {
        next = std::min(next, d->deadline);
        continue;
      }
      int expected = kQueued;
      COURIER_CLAIM_MOVE(kQueued, kExpired);
      if (!d->claim.compare_exchange_strong(expected, kExpired)) continue;
      std::string holder;
      {
        std::lock_guard<std::mutex> dl(d->mu);
        holder = d->pending.holder;
      }
      finished.emplace_back(d, d->never_dispatched(OutcomeKind::deadline_killed,
                                                   "the deadline passed while waiting for the lane" +
                                                       (holder.empty() ? std::string() : " (held by " + holder + ")") +
                                                       "; no child was spawned"));
    }
    cv.notify_all();
    return next;
  }

  // Waits for a wake-up, a lane lock closed elsewhere, or `next`. The poll
  // is bounded by `next` itself, so a timer that could not be armed cannot
  // make a deadline late. A poll that fails (EINVAL when the descriptor
  // limit was lowered below the three it watches, ENOMEM) would otherwise
  // be retried at once, forever, at full speed: instead the failure is
  // logged once and the scheduler waits on the executor's condition (the
  // executor's own stop and every release notify it) until `next`, at most
  // kSchedulerRetryWait, trying poll again each time; its recovery is
  // logged once too. Queued deadlines are still kept; a lane freed in
  // another process is seen within kSchedulerRetryWait instead of at once.
  void scheduler_wait(sys::MonoNs next, bool& poll_failing) {
    if (next != sys::kForever) {
      (void)expiry_timer->arm_at(next);
    } else {
      (void)expiry_timer->disarm();
    }
    std::vector<int> fds = {scheduler_wake->fd(), expiry_timer->fd()};
    if (watcher) fds.push_back(watcher->fd());
    auto ready = sys::wait_readable_until(fds, next);
    if (ready) {
      if (poll_failing) log("the scheduler waits on its descriptors again");
      poll_failing = false;
      scheduler_wake->drain();
      expiry_timer->drain();
      if (watcher) watcher->drain();
      return;
    }
    if (!poll_failing) {
      log("the scheduler cannot wait on its descriptors (" + ready.error().message + "); it looks again every " +
          std::to_string(seat::kSchedulerRetryWait / sys::kNsPerMs) + " ms and at each queued deadline until it can");
    }
    poll_failing = true;
    const sys::MonoNs until = std::min(next, sys::mono_now_ns() + seat::kSchedulerRetryWait);
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_until(lock, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(until)));
  }

  void wake_scheduler() {
    if (scheduler_wake) scheduler_wake->signal();
  }

  // Opens the journal asked for, and finishes what dead processes left in
  // it (J3). One that cannot be opened refuses every delivery.
  void open_journal() {
    if (!seat::wants_journal(opt)) return;
    auto j = seat::open_executor_journal(opt);
    if (!j) {
      journal_refusal = j.error().message;
      log(journal_refusal);
      recovered = tl::unexpected(j.error());
      return;
    }
    journal = std::move(*j);
    // Its log is a copy of the host's sink: a handle may keep the outbox
    // (through its record) past this executor.
    outbox =
        std::make_shared<seat::JournalOutbox>(journal, [sink = log_sink()](const std::string& line) { sink(line); });
    if (auto me = journal::identify(sys::self_pid())) self = *me;
    recovered = run_recovery();
    if (!recovered) log("recovery: " + recovered.error().message);
  }

  Result<std::vector<Outcome>> run_recovery() {
    if (!journal) return fail(Errc::journal_failed, journal_refusal.empty() ? "no journal" : journal_refusal);
    // J3: a delivery whose lane a live process holds is never touched, and
    // only the lane directory can tell: without it, nothing is recovered.
    if (!lane_dir)
      return fail(Errc::invalid_argument, "recovery needs the lane directory: " + lane_dir.error().message);
    seat::RecoveryOptions ro;
    ro.journal = journal.get();
    ro.lane_dir = *lane_dir;
    ro.read_back = opt.read_back;
    ro.stop_bound = opt.reap_bound + opt.eof_bound;
    ro.host = host;
    if (leases) {
      ro.host_alive = [k = leases.get()](const std::string& h) { return k->host_alive(h); };
      ro.lane_leased = [k = leases.get()](const std::string& lane) { return k->lane_leased(lane); };
    }
    return seat::recover(ro);
  }

  // J1, J4: the delivery's id, and its admission to the journal (durable
  // before anything runs). False when it finished here (replayed or refused).
  bool admit(const std::shared_ptr<DeliveryHandle::Shared>& d) {
    d->record.set_id(d->req.id.empty() ? seat::new_delivery_id() : d->req.id);
    if (!seat::wants_journal(opt)) return true;
    if (!journal) {
      d->claim = kRefused;
      d->finish(d->never_dispatched(OutcomeKind::failed, "the journal cannot be used: " + journal_refusal));
      return false;
    }
    journal::Submission sub;
    sub.id = d->record.id();
    sub.repo = d->req.repo;
    sub.remote = d->remote;
    sub.lane = d->lane;
    sub.ref = d->req.ref;
    sub.oid = d->req.oid;
    sub.expect_old = d->req.expect_old;
    sub.deadline_unix_ms = d->deadline_unix_ms;
    sub.submitter = self;
    sub.host = seat::host_id_of(opt);
    // The host's note: a JSON object, or nothing is journalled.
    auto note = journal::compact_note(d->req.journal_note, kMaxJournalNote);
    if (!note) {
      d->claim = kRefused;
      d->finish(d->never_dispatched(OutcomeKind::failed, note.error().message));
      return false;
    }
    sub.note = std::move(*note);
    seat::Admission a = seat::admit(*journal, sub);
    d->claim = a.verdict == seat::Admission::Verdict::run ? kQueued : kRefused;
    if (a.verdict == seat::Admission::Verdict::replay) {
      d->record.set_attempt(a.recorded.attempt);
      d->finish(std::move(a.recorded));
      return false;
    }
    if (a.verdict == seat::Admission::Verdict::refuse) {
      d->finish(d->never_dispatched(OutcomeKind::failed, a.why));
      return false;
    }
    if (a.expect_old) {
      // J4: a lease on the journalled old id. The move from it was allowed
      // when the first attempt was cleared for its POST (fast-forward
      // checked, or forced), so the fast-forward rules are not asked again:
      // a forced first attempt must be able to finish too.
      d->req.expect_old = a.expect_old;
      d->req.update = UpdateMode::expect_old;
    }
    d->resumed = a.resumed;
    d->record.bind(journal, a.attempt, outbox);
    return true;
  }

  // D1: a delivery admitted with its deadline already behind it ends here,
  // before any queue, claim or child, saying why. True when it did.
  static bool expired_at_submit(const std::shared_ptr<DeliveryHandle::Shared>& d) {
    const sys::MonoNs now = sys::mono_now_ns();
    if (now < d->deadline) return false;
    int expected = kQueued;
    COURIER_CLAIM_MOVE(kQueued, kExpired);
    if (!d->claim.compare_exchange_strong(expected, kExpired)) return false;
    const std::int64_t late_ms = d->req.deadline_unix_ms
                                     ? std::max<std::int64_t>(0, journal::wall_now_ms() - *d->req.deadline_unix_ms)
                                     : (now - d->deadline) / sys::kNsPerMs;
    std::string why;
    if (d->resumed) {
      why =
          "the deadline passed while nothing ran this delivery: its previous attempt was interrupted before "
          "dispatch (the process that queued it stopped), and it was submitted again " +
          std::to_string(late_ms) + " ms after its deadline";
    } else if (d->req.deadline_unix_ms) {
      why = "the deadline had passed " + std::to_string(late_ms) + " ms before the delivery was submitted";
    } else {
      why = "the budget (" + std::to_string(d->req.budget.count()) + " ms) ran out before the delivery was queued";
    }
    d->finish(d->never_dispatched(OutcomeKind::deadline_killed, why + "; no child was spawned"));
    return true;
  }
};

// ---- DeliveryHandle -------------------------------------------------------

namespace {

// Wakes the executor's workers and lease waiters: a delivery's claim word
// moved (a worker waiting on its lease, or for a free queue, looks again).
void wake_executor(const DeliveryHandle::Shared& s) {
  if (auto exec = s.exec.lock()) {
    std::lock_guard<std::mutex> lock(exec->mu);
    exec->cv.notify_all();
  }
}

}  // namespace

DeliveryHandle& DeliveryHandle::operator=(DeliveryHandle&& o) noexcept {
  if (this != &o) {
    if (s_) revoke("delivery handle replaced");
    s_ = std::move(o.s_);
  }
  return *this;
}

DeliveryHandle::~DeliveryHandle() {
  if (!s_) return;
  bool finished;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    finished = s_->outcome.has_value();
  }
  // S4: a caller that walks away revokes the work; the seat still follows
  // the confirmed stop, which the executor's worker waits for.
  if (!finished) revoke("the delivery handle was destroyed");
}

std::uint64_t DeliveryHandle::id() const { return s_ ? s_->id : 0; }

RevokeAnswer DeliveryHandle::revoke(const std::string& reason, RevokeCause cause) {
  // A local owner: once finish() runs, a waiter may destroy this handle.
  const std::shared_ptr<Shared> s = s_;
  if (!s) return RevokeAnswer::too_late;
  bool first = false;  // the revocation that is journalled
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->outcome || s->finishing) return RevokeAnswer::too_late;
    if (s->revoke_ns == 0) {
      s->revoke_ns = sys::mono_now_ns();
      s->revoke_reason = reason;
      s->revoke_by = cause;
      s->revoke_pending = true;
      first = true;
    }
  }
  // Only the first revocation acts: it alone moves the claim word, writes
  // the entry and kills (a later one would add nothing but a race).
  if (!first) return RevokeAnswer::repeated;
  // Every way out of here below lets finish() go on (after the entry).
  auto entry_decided = [&s] {
    {
      std::lock_guard<std::mutex> lock(s->mu);
      s->revoke_pending = false;
    }
    s->cv.notify_all();
  };
  int expected = kQueued;
  COURIER_CLAIM_MOVE(kQueued, kCancelled);
  if (s->claim.compare_exchange_strong(expected, kCancelled)) {
    // Cancellation won while queued: nothing was, or ever will be,
    // spawned for it, no seat is held, and this call writes its outcome.
    // J1, J5: the revocation is durable before revoke() returns, so neither
    // a restart nor a lost `finished` can run it again.
    s->journal_revocation(reason, cause, false);
    entry_decided();
    s->finish(s->never_dispatched(OutcomeKind::cancelled_no_dispatch, "revoked before dispatch: " + reason));
    wake_executor(*s);
    return RevokeAnswer::cancelled;
  }
  expected = kSeated;
  COURIER_CLAIM_MOVE(kSeated, kCancelledSeated);
  if (s->claim.compare_exchange_strong(expected, kCancelledSeated)) {
    // Cancellation won while a worker holds the seat: that worker writes
    // the outcome once the seat is back (J5, S2); the entry goes first.
    s->journal_revocation(reason, cause, false);
    entry_decided();
    wake_executor(*s);  // the seat's worker writes the outcome
    return RevokeAnswer::cancelled;
  }
  // Claimed: before the child's result, the revocation decides the outcome
  // (stopping); after it (answered), the child is still stopped, and its
  // result stands.
  expected = kClaimed;
  COURIER_CLAIM_MOVE(kClaimed, kStopping);
  const bool stopping = s->claim.compare_exchange_strong(expected, kStopping);
  if (!stopping && expected != kAnswered) {
    // Expired or refused a moment ago: that outcome stands, nothing to stop.
    entry_decided();
    return RevokeAnswer::too_late;
  }
  // Live: the intent first (J1), then the kill.
  s->revoke_live(reason, cause);
  entry_decided();
  std::shared_ptr<Supervisor> sup;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    sup = s->sup;
  }
  // The claim won: kill and confirm (the supervisor handles both). A warm
  // child not yet adopted gets it from adopt() (d->sup is null until then).
  if (sup) sup->revoke(reason, cause);
  return stopping ? RevokeAnswer::stopping : RevokeAnswer::too_late;
}

namespace {

// An empty handle (default-constructed, or moved from) names no delivery:
// asking it about one is the caller's mistake, said loudly, never a crash.
const std::shared_ptr<DeliveryHandle::Shared>& named(const std::shared_ptr<DeliveryHandle::Shared>& s,
                                                     const char* what) {
  if (!s) {
    throw std::logic_error(std::string("DeliveryHandle::") + what +
                           ": this handle is empty (default-constructed or moved from) and names no delivery");
  }
  return s;
}

}  // namespace

Outcome DeliveryHandle::wait() {
  const auto& s = named(s_, "wait");
  std::unique_lock<std::mutex> lock(s->mu);
  s->cv.wait(lock, [&] { return s->outcome.has_value(); });
  return *s->outcome;
}

std::optional<Outcome> DeliveryHandle::wait_for(std::chrono::milliseconds timeout) {
  const auto& s = named(s_, "wait_for");
  std::unique_lock<std::mutex> lock(s->mu);
  if (!s->cv.wait_for(lock, timeout, [&] { return s->outcome.has_value(); })) return std::nullopt;
  return *s->outcome;
}

DeliveryState DeliveryHandle::state() const {
  const auto& s = named(s_, "state");
  std::lock_guard<std::mutex> lock(s->mu);
  return s->state;
}

DeliveryEvent DeliveryHandle::last_pending() const {
  const auto& s = named(s_, "last_pending");
  std::lock_guard<std::mutex> lock(s->mu);
  return s->pending;
}

// ---- Executor -------------------------------------------------------------

Executor::Executor(ExecutorOptions options) : impl_(std::make_shared<Impl>()) {
  impl_->opt = std::move(options);
  if (impl_->opt.lane_dir.empty()) {
    auto dir = default_lane_dir();
    if (dir)
      impl_->opt.lane_dir = *dir;
    else
      impl_->lane_dir = tl::unexpected(dir.error());
  }
  if (impl_->opt.workers == 0) impl_->opt.workers = 1;
  // H1: a directory this process did not create is verified, never chmodded.
  // An unusable one refuses every delivery (failed, with the reason), since
  // a constructor has no error to return.
  if (!impl_->opt.lane_dir.empty()) impl_->lane_dir = sys::LaneDir::open(impl_->opt.lane_dir);
  if (!impl_->lane_dir) impl_->log(impl_->lane_dir.error().message);
  if (auto w = sys::CloseWatcher::create()) {
    impl_->watcher = std::move(*w);
  } else {
    impl_->log(
        "no close notifications for lane locks (" + w.error().message +
        "); waiters on other processes' lanes retry only when this process releases a seat or at their deadline");
  }
  auto wake = sys::EventFd::create();
  auto timer = sys::TimerFd::create();
  if (!wake || !timer) std::abort();  // out of descriptors at construction: nothing sensible to do
  impl_->scheduler_wake = std::move(*wake);
  impl_->expiry_timer = std::move(*timer);
  impl_->host = seat::host_id_of(impl_->opt);
  impl_->instance = impl_->host + "-" + std::to_string(sys::self_pid()) + "-" + instance_nonce();
  impl_->open_leases();  // first: recovery asks the database about other hosts
  impl_->open_journal();
  for (std::size_t i = 0; i < impl_->opt.workers; ++i) impl_->workers.emplace_back([this] { impl_->worker(); });
  for (std::size_t i = 0; i < impl_->warm_target(); ++i) impl_->start_warm();
  impl_->scheduler = std::thread([this] { impl_->schedule(); });
}

Executor::~Executor() {
  std::vector<std::shared_ptr<DeliveryHandle::Shared>> all;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
    all.assign(impl_->queue.begin(), impl_->queue.end());
    all.insert(all.end(), impl_->running.begin(), impl_->running.end());
  }
  for (auto& d : all) DeliveryHandle(d).revoke("the executor is shutting down", RevokeCause::shutdown);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->cv.notify_all();
  }
  impl_->wake_scheduler();
  for (auto& w : impl_->workers) w.join();
  std::vector<std::shared_ptr<WarmSlot>> warm;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    warm = std::move(impl_->warm);
    impl_->warm.clear();
  }
  for (auto& slot : warm) slot->retire("the executor is shutting down");
  impl_->leases.reset();  // no turn is left: the keeper's callbacks have nothing more to reach
  impl_->outbox.reset();  // one last bounded try; what is left is logged
  impl_->wake_scheduler();
  impl_->scheduler.join();
  std::lock_guard<std::mutex> lock(g_retained_mu);
  for (auto& [key, lane] : impl_->lanes) {
    if (lane.poisoned_by != 0 && lane.file) g_retained->push_back(lane.file->take_fd());
  }
}

DeliveryHandle Executor::submit(DeliveryRequest request) {
  auto d = std::make_shared<DeliveryHandle::Shared>();
  d->id = impl_->next_id++;
  d->submitted = sys::mono_now_ns();
  // D1: one absolute instant, fixed now. An absolute deadline is carried
  // over to the monotonic clock once; a budget counts from now.
  const std::int64_t wall_now = journal::wall_now_ms();
  std::int64_t budget_ms = static_cast<std::int64_t>(request.budget.count());
  if (request.deadline_unix_ms && __builtin_sub_overflow(*request.deadline_unix_ms, wall_now, &budget_ms)) {
    budget_ms = *request.deadline_unix_ms < 0 ? 0 : INT64_MAX;  // absurd either way: past, or never
  }
  d->deadline = sys::mono_after_ms(d->submitted, budget_ms);
  if (request.deadline_unix_ms) {
    d->deadline_unix_ms = *request.deadline_unix_ms;
  } else if (__builtin_add_overflow(wall_now, budget_ms, &d->deadline_unix_ms)) {
    d->deadline_unix_ms = INT64_MAX;
  }
  d->req = std::move(request);
  d->exec = impl_;
  DeliveryHandle handle(d);
  // H2: one canonical form for the lane and for what the child requests;
  // an ambiguous spelling or a password never gets this far.
  auto remote = wire::parse_remote(d->req.remote);
  if (!remote) {
    d->claim = kRefused;
    d->finish(d->never_dispatched(OutcomeKind::failed, remote.error().message));
    return handle;
  }
  d->lane = remote->lane;
  d->remote = remote->canonical;
  // T1: a proxy kind other than an http:// CONNECT tunnel is refused, never
  // bypassed; the message never shows its credentials.
  if (d->req.proxy) {
    auto proxy = wire::parse_proxy(*d->req.proxy);
    if (!proxy) {
      d->claim = kRefused;
      d->finish(d->never_dispatched(OutcomeKind::failed, proxy.error().message));
      return handle;
    }
    d->proxy = std::move(*proxy);
  }
  if (d->req.update == UpdateMode::expect_old && !d->req.expect_old) {
    d->claim = kRefused;
    d->finish(d->never_dispatched(OutcomeKind::failed,
                                  "update expect_old needs expect_old: the id the remote's ref must be at"));
    return handle;
  }
  if (impl_->lease_wanted && !impl_->leases) {
    d->claim = kRefused;
    d->finish(d->never_dispatched(OutcomeKind::failed, impl_->lease_refusal));
    return handle;
  }
  if (!impl_->admit(d)) return handle;
  if (Impl::expired_at_submit(d)) return handle;
  d->engine_automatic = d->req.pack_engine == PackEngine::automatic;
  if (auto engine = seat::resolve_pack_engine(d->req); !engine) {
    d->claim = kRefused;
    d->finish(d->never_dispatched(OutcomeKind::failed, engine.error().message));
    return handle;
  }
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->lanes.find(d->lane);
    const auto why = impl_->poisoned(d->lane, it != impl_->lanes.end() ? &it->second : nullptr);
    if (why) {
      d->claim = kRefused;
      d->finish(d->never_dispatched(OutcomeKind::lane_poisoned, *why));
      return handle;
    }
    impl_->queue.push_back(d);
    impl_->cv.notify_all();
  }
  impl_->wake_scheduler();
  return handle;
}

std::uint64_t Executor::spawned() const { return impl_->spawned.load(); }

Result<std::vector<Outcome>> Executor::recover() { return impl_->run_recovery(); }

const Result<std::vector<Outcome>>& Executor::recovered_at_start() const { return impl_->recovered; }

std::int64_t Executor::wait_warm_child(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->cv.wait_for(lock, timeout, [&] { return impl_->warm_usable() > 0; });
  for (const auto& w : impl_->warm) {
    if (w->usable()) return w->sup->child_pid();
  }
  return 0;
}

std::int64_t Executor::warm_child_pid() const { return wait_warm_child(std::chrono::milliseconds(0)); }

std::size_t Executor::warm_ready() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->warm_usable();
}

std::size_t Executor::wait_warm_ready(std::size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->cv.wait_for(lock, timeout, [&] { return impl_->warm_usable() >= n; });
  return impl_->warm_usable();
}

std::vector<std::int64_t> Executor::warm_child_pids() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<std::int64_t> out;
  for (const auto& w : impl_->warm) {
    if (w->usable()) out.push_back(w->sup->child_pid());
  }
  return out;
}
const std::string& Executor::lane_dir() const { return impl_->opt.lane_dir; }

}  // namespace courier
