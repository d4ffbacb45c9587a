// recovery.cpp — finishing deliveries a dead process left in the journal (J3).
//
// A delivery is touched only when the process that submitted it is gone,
// told by pid + start time + boot id, and when no live process holds its
// lane lock (this pass holds it while it works). A child still alive is
// found the same way, never by pid alone, and killed through a pidfd that
// was re-identified after it was opened. Finishing is a journal append that
// the journal refuses if another recovery (or the owner) finished first, so
// two passes, in one process or two, never both finish a delivery.
#include "seat/recovery.hpp"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "seat/admission.hpp"
#include "seat/lane.hpp"
#include "sys/cgroup.hpp"
#include "supervisor/scratch_area.hpp"
#include "sys/events.hpp"
#include "sys/process.hpp"
#include "sys/process_owner.hpp"
#include "sys/spawn.hpp"

namespace courier::seat {

namespace {

std::optional<journal::ProcessIdentity> child_of(const journal::Record& r) {
  auto e = r.last(journal::Step::dispatched);
  if (!e) return std::nullopt;
  journal::ProcessIdentity who;
  who.pid = std::atoll(journal::detail_text(e->detail, "child_pid").c_str());
  who.start_ticks = std::strtoull(journal::detail_text(e->detail, "child_start_ticks").c_str(), nullptr, 10);
  who.boot_id = journal::detail_text(e->detail, "child_boot_id");
  if (who.pid <= 0) return std::nullopt;
  return who;
}

// A scratch directory kept for an unconfirmed stop, removed once nothing
// runs: only a directory (not a symlink) named like ours in this user's
// scratch parent, whatever the journal says.
void remove_kept_scratch(const std::string& path) {
  if (path.empty()) return;
  const std::string base = supervisor::scratch_parent_path() + "/" + supervisor::kScratchPrefix;
  if (path.rfind(base, 0) != 0 || path.find("/..") != std::string::npos) return;
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(path, ec))) return;
  std::filesystem::remove_all(path, ec);
}

// The lane's lock, taken for the time of the recovery of one delivery;
// nullopt when a live process holds it (the delivery is not touched).
struct LaneHold {
  std::optional<sys::LockFile> file;
  ~LaneHold() {
    if (file) file->unlock();
  }
};

bool hold_lane(const RecoveryOptions& opt, const std::string& lane, LaneHold& hold) {
  if (!opt.lane_dir || lane.empty()) return true;
  auto f = sys::LockFile::open(opt.lane_dir, lane_lock_name(lane));
  if (!f) return false;
  auto locked = f->try_lock();
  if (!locked || !*locked) return false;
  hold.file = std::move(*f);
  return true;
}

// Every ref of the submission (J2 per ref): a ref whose command the POST
// sent (post_started's "sent") is unknown, its effect possible, unless the
// delivery's effect is none; every other ref was not attempted. Each takes
// its journalled old id.
void interrupted_refs(const journal::Record& r, RemoteEffect effect, Outcome& o) {
  const auto olds = journalled_old_oids(r);
  const auto sent = journalled_sent(r);
  for (const RefUpdate& u : r.submission.updates) {
    RefOutcome one;
    one.ref = u.ref;
    one.oid = u.oid;
    if (auto it = olds.find(u.ref); it != olds.end()) one.old_oid = it->second;
    const bool was_sent = std::find(sent.begin(), sent.end(), u.ref) != sent.end();
    one.status = was_sent && effect != RemoteEffect::none ? RefStatus::unknown : RefStatus::not_attempted;
    one.remote_effect = ref_remote_effect(one.status);
    o.refs.push_back(std::move(one));
  }
  if (!o.refs.empty() && o.refs.front().old_oid) o.old_oid = o.refs.front().old_oid;
}

Outcome interrupted_outcome(const journal::Record& r, RemoteEffect effect) {
  Outcome o;
  o.kind = OutcomeKind::interrupted;
  o.delivery_id = r.submission.id;
  o.attempt = r.submission.attempt;
  o.remote_effect = effect;
  // Nothing was sent without post_started; after it, how much left is not
  // known here (the process that counted is gone): no figure is claimed.
  if (effect == RemoteEffect::none) o.bytes_sent = 0;
  if (auto old = r.last(journal::Step::advertised)) o.old_oid = journal::detail_text(old->detail, "old_oid");
  interrupted_refs(r, effect, o);
  if (auto d = r.last(journal::Step::dispatched)) {
    o.dispatched = true;
    o.kill_domain = journal::detail_text(d->detail, "kill_domain");
  }
  const journal::Step last = r.latest().empty() ? journal::Step::submitted : r.latest().back().step;
  o.reason = std::string("the process that ran this delivery (pid ") + std::to_string(r.submission.submitter.pid) +
             ") is gone; its last journalled step was " + journal::step_name(last) + "; finished by recovery";
  return o;
}

void read_back(const RecoveryOptions& opt, const journal::Record& r, Outcome& o) {
  if (o.remote_effect != RemoteEffect::possible && o.remote_effect != RemoteEffect::mixed) return;
  // A5: an ssh remote is not read back by default (a read-back would need
  // the agent to sign once more, outside the delivery's own authority): the
  // outcome says how to look (docs/operations.md "SSH remotes").
  if (r.submission.remote.rfind("ssh://", 0) == 0) {
    o.reason += "; not read back (an ssh remote is not read back by default): check the ref with git ls-remote " +
                r.submission.remote + " " + r.submission.ref;
    return;
  }
  if (!opt.read_back) {
    o.reason += "; no read-back was made (none configured)";
    return;
  }
  // J2 per ref: each ref whose command may have been applied is read back
  // (an observation with a time, never a verdict); the outcome's own
  // observed_after is the first one's (what a reader of one ref reads).
  for (RefOutcome& ref : o.refs) {
    if (ref.status != RefStatus::unknown) continue;
    ObservedAfter seen = opt.read_back(r.submission.remote, ref.ref);
    seen.matches_this_delivery = seen.error.empty() && seen.oid == ref.oid;
    ref.observed_after = seen;
    if (!o.observed_after) o.observed_after = std::move(seen);
  }
  if (o.refs.empty()) {
    ObservedAfter seen = opt.read_back(r.submission.remote, r.submission.ref);
    seen.matches_this_delivery = seen.error.empty() && seen.oid == r.submission.oid;
    o.observed_after = std::move(seen);
  }
}

// One unfinished delivery whose submitter is gone. nullopt: left alone.
std::optional<Outcome> finish_unfinished(const RecoveryOptions& opt, const journal::Record& r) {
  if (auto child = child_of(r); child && !stop_leftover(*child, opt.stop_bound)) return std::nullopt;
  // J5: a cancellation that won the dispatch claim is the outcome, not an
  // interruption: only its finished entry was lost.
  auto cancelled = cancelled_before_dispatch(r);
  Outcome o = cancelled ? std::move(*cancelled) : interrupted_outcome(r, recovered_effect(r));
  read_back(opt, r, o);
  journal::Entry e{journal::Step::finished, r.submission.attempt, journal::wall_now_ms(), journal::outcome_detail(o)};
  if (auto ok = opt.journal->append(r.submission.id, e, true); !ok) return std::nullopt;
  return o;
}

// One finished delivery whose stop was unconfirmed: confirmed now when its
// child is gone; its kept scratch directory is removed.
std::optional<Outcome> confirm_retained(const RecoveryOptions& opt, const journal::Record& r) {
  auto last = r.last(journal::Step::finished);
  if (!last) return std::nullopt;
  auto o = journal::outcome_from_detail(last->detail);
  if (!o) return std::nullopt;
  if (auto child = child_of(r); child && !stop_leftover(*child, opt.stop_bound)) return std::nullopt;
  journal::Entry e{journal::Step::stop_confirmed, r.submission.attempt, journal::wall_now_ms(), R"({"by":"recovery"})"};
  if (auto ok = opt.journal->append(r.submission.id, e, true); !ok) return std::nullopt;
  remove_kept_scratch(o->scratch_kept);
  o->scratch_kept.clear();
  o->reason += "; later confirmed stopped by recovery";
  return *o;
}

}  // namespace

RemoteEffect recovered_effect(const journal::Record& r) {
  if (!r.last(journal::Step::post_started)) return RemoteEffect::none;
  if (auto answered = r.last(journal::Step::answered)) {
    auto e = remote_effect_from_name(journal::detail_text(answered->detail, "remote_effect"));
    if (e) return *e;
  }
  return RemoteEffect::possible;
}

bool provably_a_delivery_child(std::int64_t pid) {
  auto self = sys::self_owner();
  auto them = sys::process_owner(static_cast<pid_t>(pid));
  if (!self || !them) return false;
  // Never another user's process, nor one that changed its identity.
  if (them->uid != self->euid || them->euid != self->euid) return false;
  // This program, re-executed as its child (`__delivery-push`).
  if (them->exe_dev != self->exe_dev || them->exe_ino != self->exe_ino) return false;
  // The leader of its own process group, as every delivery child is.
  if (them->pgid != pid) return false;
  // In this process's cgroup, or in a delivery cgroup made directly under it.
  if (them->cgroup == self->cgroup) return true;
  const std::string base = self->cgroup == "/" ? "/" : self->cgroup + "/";
  const std::string name = them->cgroup.rfind(base, 0) == 0 ? them->cgroup.substr(base.size()) : std::string();
  return name.rfind(sys::kDeliveryCgroupPrefix, 0) == 0 && name.find('/') == std::string::npos;
}

bool stop_leftover(const journal::ProcessIdentity& child, sys::MonoNs bound) {
  const sys::MonoNs until = sys::mono_now_ns() + bound;
  // The leader is gone. Members left in its process group cannot be told
  // from a later group of the same number, so they are not signalled; a
  // lane lock one of them still holds keeps the delivery out of recovery.
  if (!journal::is_alive(child)) return true;
  auto fd = sys::pidfd_open(static_cast<pid_t>(child.pid));
  if (!fd) return !journal::is_alive(child);
  // The pidfd now names one process: the one we identified, or (if the pid
  // was reused between the check and the open) another, which we leave.
  if (!journal::is_alive(child)) return true;
  // The journal may have been written by anyone who can write the shared
  // database: a process it names is killed only when it is provably a
  // delivery child of this user; anything else is left, and so is the
  // delivery (not finished: its stop cannot be confirmed from here).
  if (!provably_a_delivery_child(child.pid)) return false;
  (void)sys::signal_group(static_cast<pid_t>(child.pid), SIGKILL);
  (void)sys::pidfd_signal(fd->get(), SIGKILL);
  auto ready = sys::wait_readable_until({fd->get()}, until);
  return ready && !ready->empty();
}

// Another host's delivery, left unfinished: finished only when the host is
// gone and the lane's lease has expired plus the margin, by the database.
std::optional<Outcome> finish_foreign(const RecoveryOptions& opt, const journal::Record& r) {
  if (r.finished || !opt.host_alive || !opt.lane_leased) return std::nullopt;  // its stop is that host's to confirm
  auto alive = opt.host_alive(r.submission.host);
  if (!alive || *alive) return std::nullopt;
  auto leased = opt.lane_leased(r.submission.lane);
  if (!leased || *leased) return std::nullopt;
  auto cancelled = cancelled_before_dispatch(r);  // J5, as on this host
  Outcome o = cancelled ? std::move(*cancelled) : interrupted_outcome(r, recovered_effect(r));
  if (!cancelled) {
    o.reason = "host " + r.submission.host + " (which ran this delivery in process " +
               std::to_string(r.submission.submitter.pid) +
               ") shows no life and its lease on the lane has expired; finished by recovery on host " + opt.host;
  }
  read_back(opt, r, o);
  journal::Entry e{journal::Step::finished, r.submission.attempt, journal::wall_now_ms(), journal::outcome_detail(o)};
  if (auto ok = opt.journal->append(r.submission.id, e, true); !ok) return std::nullopt;
  return o;
}

Result<std::vector<Outcome>> recover(const RecoveryOptions& opt) {
  auto work = opt.journal->open_work();
  if (!work) return tl::unexpected(work.error());
  std::vector<Outcome> done;
  for (const auto& r : *work) {
    if (!r.submission.host.empty() && r.submission.host != opt.host) {
      if (auto o = finish_foreign(opt, r)) done.push_back(std::move(*o));
      continue;  // J3: a process is identified on its own host only
    }
    if (journal::is_alive(r.submission.submitter)) continue;  // J3: never a live submitter's
    LaneHold hold;
    if (!hold_lane(opt, r.submission.lane, hold)) continue;  // J3: never a held lane's
    auto o = r.finished ? confirm_retained(opt, r) : finish_unfinished(opt, r);
    if (o) done.push_back(std::move(*o));
  }
  return done;
}

}  // namespace courier::seat
