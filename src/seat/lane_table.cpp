// lane_table.cpp — lanes, seats, lock files and poisoning (S1, S2, S3, S6).
#include "seat/lane_table.hpp"

#include <cstdlib>
#include <vector>

#include "seat/lane.hpp"
#include "sys/mutex.hpp"
#include "sys/process.hpp"
#include "wire/text.hpp"

namespace courier::seat {

namespace {

// How much of a lane lock's holder text a pending event shows.
constexpr std::size_t kMaxHolderShown = 120;

std::int64_t holder_pid_from(const std::string& text) {
  const auto pos = text.find("pid=");
  if (pos == std::string::npos) return 0;
  return std::atoll(text.c_str() + pos + 4);
}

// Lane locks of poisoned lanes outlive their executor: the seat is retained
// for the life of the process (S3). Reachable from here, never closed.
sys::Mutex g_retained_mu;
std::vector<sys::ScopedFd>* g_retained COURIER_PT_GUARDED_BY(g_retained_mu) = new std::vector<sys::ScopedFd>();

// Poisoned lanes, by lane key, with why (S3). A fact of the process, not of
// one Executor: the child that could not be confirmed stopped may still be
// working on that remote, whichever Executor (and lane directory) asks next.
// Entries are never removed. A leaf lock: taken under an Executor's lock,
// never the other way round.
sys::Mutex g_poisoned_mu;
std::map<std::string, std::string>* g_poisoned COURIER_PT_GUARDED_BY(g_poisoned_mu) =
    new std::map<std::string, std::string>();

void poison_lane(const std::string& key, const std::string& why) {
  sys::MutexLock lock(g_poisoned_mu);
  g_poisoned->emplace(key, why);  // the first reason stays
}

std::optional<std::string> lane_poisoned_in_process(const std::string& key) {
  sys::MutexLock lock(g_poisoned_mu);
  const auto it = g_poisoned->find(key);
  if (it == g_poisoned->end()) return std::nullopt;
  return it->second;
}

std::string poisoned_reason(const std::string& key, const Lane& l) {
  return "lane " + key + " is poisoned: delivery " + std::to_string(l.poisoned_by) +
         " could not confirm its child's stop, so the seat is retained for the life of this process";
}

}  // namespace

void LaneTable::attach(const Result<std::shared_ptr<const sys::LaneDir>>* dir, sys::CloseWatcher* watcher) {
  dir_ = dir;
  watcher_ = watcher;
}

Result<Lane*> LaneTable::lane_for(const std::string& key) {
  Lane& lane = lanes_[key];
  if (!lane.file) {
    if (!dir_) return fail(Errc::invalid_argument, "no lane directory");
    if (!*dir_) return tl::unexpected(dir_->error());
    auto f = sys::LockFile::open(**dir_, lane_lock_name(key));
    if (!f) return tl::unexpected(f.error());
    lane.file = std::move(*f);
  }
  return &lane;
}

// Watched from the first time another process is found holding it, not
// from its opening: an inotify instance that ever held a watch makes its
// close wait for the kernel's mark reaper (an SRCU grace period, about
// 7 ms measured at a push's exit), which a command whose lane was free
// need not pay. The lock is tried once more with the watch in place, so a
// close between the first try and the watch is not missed.
bool LaneTable::watch_held(Lane& lane) const {
  if (!watcher_ || lane.watch >= 0 || lane.holder != 0) return false;
  auto wd = watcher_->watch(*lane.file);
  if (!wd) return false;
  lane.watch = *wd;
  return try_seat(lane);
}

const Lane* LaneTable::find(const std::string& key) const {
  const auto it = lanes_.find(key);
  return it == lanes_.end() ? nullptr : &it->second;
}

DeliveryEvent LaneTable::pending_event(std::uint64_t id, const Lane& lane) const {
  DeliveryEvent e;
  e.kind = DeliveryEvent::Kind::pending;
  e.delivery = id;
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

const DeliveryEvent* LaneTable::known_held(const Lane& lane) const {
  return lane.held_epoch == epoch_ ? &lane.held_by : nullptr;
}

const DeliveryEvent& LaneTable::note_held(Lane& lane, DeliveryEvent holder) const {
  lane.held_epoch = epoch_;
  lane.held_by = std::move(holder);
  return lane.held_by;
}

bool LaneTable::try_seat(Lane& lane) const {
  if (lane.holder != 0) return false;
  auto locked = lane.file->try_lock();
  return locked && *locked;
}

void LaneTable::hold(Lane& lane, std::uint64_t id, const std::string& key) const {
  lane.holder = id;
  lane.holder_child = 0;
  lane.file->write_holder("pid=" + std::to_string(sys::self_pid()) + " delivery=" + std::to_string(id) +
                          " lane=" + key);
}

void LaneTable::give_back(Lane& lane) const { lane.file->unlock(); }

void LaneTable::child_spawned(const std::string& key, std::uint64_t id, std::int64_t pid) {
  Lane& l = lanes_[key];
  if (l.holder != id) return;
  may_have_freed();  // its waiters' pending event names the child now
  l.holder_child = pid;
  l.file->write_holder("pid=" + std::to_string(sys::self_pid()) + " delivery=" + std::to_string(id) +
                       " child=" + std::to_string(pid) + " lane=" + key);
}

int LaneTable::inherit_fd(const std::string& key) { return lanes_[key].file->fd(); }

std::optional<std::string> LaneTable::end_turn(const std::string& key, std::uint64_t id, const Outcome& o) {
  may_have_freed();
  Lane& l = lanes_[key];
  if (l.holder != id) return std::nullopt;
  if (o.seat() == SeatDisposition::release) {
    l.holder = 0;
    l.holder_child = 0;
    l.file->write_holder("");
    l.file->unlock();
    return std::nullopt;
  }
  // Retained: the in-process seat and the lock file description stay held
  // until this process exits.
  l.poisoned_by = id;
  poison_lane(key, poisoned_reason(key, l));
  return "lane " + key + " poisoned by delivery " + std::to_string(id) + ": " + o.reason;
}

std::optional<std::string> LaneTable::poisoned(const std::string& key, const Lane* l) const {
  if (l && l->poisoned_by != 0) return poisoned_reason(key, *l);
  return lane_poisoned_in_process(key);
}

std::size_t poisoned_lane_count() {
  sys::MutexLock lock(g_poisoned_mu);
  return g_poisoned->size();
}

void LaneTable::retain_poisoned() {
  sys::MutexLock lock(g_retained_mu);
  for (auto& [key, lane] : lanes_) {
    if (lane.poisoned_by != 0 && lane.file) g_retained->push_back(lane.file->take_fd());
  }
}

}  // namespace courier::seat

namespace courier {

std::vector<int> retained_lane_lock_fds() {
  sys::MutexLock lock(seat::g_retained_mu);
  std::vector<int> out;
  for (const auto& fd : *seat::g_retained) out.push_back(fd.get());
  return out;
}

}  // namespace courier
