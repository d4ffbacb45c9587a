// executor.cpp — the Executor behind courier.hpp: its construction and
// shutdown, the journal it opens and recovers (J3), and the warm children
// it reports. The work itself lives in the rooms executor_core.hpp names.
//
// A delivery is queued with its absolute deadline fixed at submit (D1).
// Idle workers scan the queue in order and take the first delivery whose
// lane has a free seat in this process and whose lane lock file they can
// flock across processes (S1). The worker then makes the dispatch claim —
// one CAS that either wins (a child may be spawned) or finds the delivery
// already cancelled (nothing is ever spawned: S5) — and supervises the
// child. The seat is released only after the supervisor returns a
// confirmed outcome (S2); an unconfirmed one poisons the lane for the life
// of the process (S3). A scheduler thread expires queued deliveries at
// their deadline and wakes the workers when a lane lock file is closed by
// another process. With a PostgreSQL state, a lane is also a lease that
// hosts share (L1, L3): a worker that has the lane's seat and lock here
// takes the lease before the claim, parking the delivery (not the worker)
// while the lease is held elsewhere; the turn's kill instant is
// min(deadline, lease bound).

#include <cstdio>
#include <cstdlib>

#include "request/checked_parts.hpp"
#include "seat/early_child.hpp"
#include "seat/executor_core.hpp"
#include "seat/recovery.hpp"
#include "seat/state_journal.hpp"
#include "sys/process.hpp"
#include "sys/random.hpp"
#include "sys/state_paths.hpp"
#include "wire/digest.hpp"

namespace courier {

namespace {

// A few random hex digits that tell this executor from an earlier one of
// the same process id on the same host.
std::string instance_nonce() {
  auto bytes = sys::random_bytes(6);
  if (!bytes) return std::to_string(sys::mono_now_ns());
  return wire::to_hex(*bytes);
}

// The options every warm child is spawned with (no job yet).
supervisor::SupervisorOptions warm_options(const Executor::Impl& impl) {
  return warm_child_options(impl.opt, impl.log_sink());
}

// How many warm children to keep: warm_children, or one for warm_child.
std::size_t warm_target(const ExecutorOptions& opt) {
  return std::max(opt.warm_children, opt.warm_child ? std::size_t{1} : std::size_t{0});
}

}  // namespace

Result<std::string> default_lane_dir() { return sys::default_lane_dir(); }

void Executor::Impl::log(const std::string& line) const {
  if (opt.on_log) {
    opt.on_log(line);
  } else {
    std::fprintf(stderr, "git-courier: %s\n", line.c_str());
  }
}

std::function<void(std::string_view)> Executor::Impl::log_sink() const {
  return [on_log = opt.on_log](std::string_view line) {
    if (on_log) {
      on_log(line);
    } else {
      std::fprintf(stderr, "git-courier: %.*s\n", static_cast<int>(line.size()), line.data());
    }
  };
}

void Executor::Impl::at_point(const DeliveryPtr& d, std::string_view point) const {
  if (opt.at_point_for_tests) opt.at_point_for_tests(d->id, point);
}

void Executor::Impl::wake_workers() {
  sys::MutexLock lock(mu);
  lanes.may_have_freed();
  cv.notify_all();
}

void Executor::Impl::look_again() {
  sys::MutexLock lock(mu);
  cv.notify_one();
}

// Opens the journal asked for, and finishes what dead processes left in it
// (J3). One that cannot be opened refuses every delivery.
void Executor::Impl::open_journal(sys::MonoNs connect_until) {
  if (!seat::wants_journal(opt)) return;
  auto j = seat::open_executor_journal(opt, connect_until);
  if (!j) {
    journal_refusal = j.error().message;
    log(journal_refusal);
    recovered = tl::unexpected(j.error());
    return;
  }
  journal = std::move(*j);
  // Its log is a copy of the host's sink: a handle may keep the outbox
  // (through its record) past this executor.
  outbox = std::make_shared<seat::JournalOutbox>(journal, [sink = log_sink()](const std::string& line) { sink(line); });
  if (auto me = journal::identify(sys::self_pid())) self = *me;
  recovered = run_recovery();
  if (!recovered) log("recovery: " + recovered.error().message);
}

Result<std::vector<Outcome>> Executor::Impl::run_recovery() {
  if (!journal) return fail(Errc::journal_failed, journal_refusal.empty() ? "no journal" : journal_refusal);
  // J3: a delivery whose lane a live process holds is never touched, and
  // only the lane directory can tell: without it, nothing is recovered.
  if (!lane_dir) return fail(Errc::invalid_argument, "recovery needs the lane directory: " + lane_dir.error().message);
  seat::RecoveryOptions ro;
  ro.journal = journal.get();
  ro.lane_dir = *lane_dir;
  ro.read_back = opt.read_back;
  ro.stop_bound = opt.reap_bound + opt.eof_bound;
  ro.host = host;
  leases.recovery_questions(ro);
  return seat::recover(ro);
}

Executor::Executor(ExecutorOptions options) : impl_(std::make_shared<Impl>()) {
  Impl& impl = *impl_;
  impl.opt = std::move(options);
  if (impl.opt.lane_dir.empty()) {
    auto dir = default_lane_dir();
    if (dir)
      impl.opt.lane_dir = *dir;
    else
      impl.lane_dir = tl::unexpected(dir.error());
  }
  if (impl.opt.workers == 0) impl.opt.workers = 1;
  // H1: a directory this process did not create is verified, never chmodded.
  // An unusable one refuses every delivery (failed, with the reason), since
  // a constructor has no error to return.
  if (!impl.opt.lane_dir.empty()) impl.lane_dir = sys::LaneDir::open(impl.opt.lane_dir);
  if (!impl.lane_dir) impl.log(impl.lane_dir.error().message);
  if (auto w = sys::CloseWatcher::create()) {
    impl.watcher = std::move(*w);
  } else {
    impl.log("no close notifications for lane locks (" + w.error().message +
             "); waiters on other processes' lanes retry only when this process releases a seat or at their deadline");
  }
  {
    sys::MutexLock lock(impl.mu);
    impl.lanes.attach(&impl.lane_dir, impl.watcher ? &*impl.watcher : nullptr);
  }
  if (!impl.scheduler.open()) std::abort();  // out of descriptors at construction: nothing sensible to do
  impl.host = seat::host_id_of(impl.opt);
  impl.instance = impl.host + "-" + std::to_string(sys::self_pid()) + "-" + instance_nonce();
  // The leases and the journal connect within one operation's bound between
  // them (kLockWaitMs): a database that accepts TCP and never answers costs
  // a command that much, not a bound per connection.
  const sys::MonoNs connect_until = sys::mono_after_ms(sys::mono_now_ns(), journal::kLockWaitMs);
  // First: recovery asks the database about other hosts.
  impl.leases.open(impl.opt, impl.host, impl.instance,
                   {[&impl] { impl.wake_workers(); }, [&impl](const std::string& line) { impl.log(line); }},
                   connect_until);
  impl.open_journal(connect_until);
  impl.warm = std::make_unique<seat::WarmPool>(warm_target(impl.opt), warm_options(impl));
  if (impl.opt.early_child) {
    if (auto early = impl.opt.early_child->take()) impl.warm->adopt(std::move(early));
  }
  for (std::size_t i = 0; i < impl.opt.workers; ++i) impl.workers.emplace_back([&impl] { impl.worker(); });
  impl.warm->fill();
  impl.scheduler.start(impl);
}

Executor::~Executor() {
  Impl& impl = *impl_;
  std::vector<DeliveryPtr> all;
  {
    sys::MutexLock lock(impl.mu);
    impl.stopping = true;
    all.assign(impl.queue.begin(), impl.queue.end());
    all.insert(all.end(), impl.running.begin(), impl.running.end());
  }
  impl.warm->close();
  for (auto& d : all) revoke_delivery(d, "the executor is shutting down", RevokeCause::shutdown);
  impl.wake_workers();
  impl.scheduler.wake();
  for (auto& w : impl.workers) w.join();
  impl.warm->retire_all();
  impl.leases.close();  // no turn is left: the keeper's callbacks have nothing more to reach
  impl.outbox.reset();  // one last bounded try; what is left is logged
  impl.scheduler.wake();
  impl.scheduler.join();
  sys::MutexLock lock(impl.mu);
  impl.lanes.retain_poisoned();
}

DeliveryHandle Executor::submit(DeliveryRequest request) {
  auto checked = validate(request);
  if (checked) return submit(std::move(*checked));
  auto d = std::make_shared<DeliveryHandle::Shared>();
  d->id = impl_->next_id++;
  d->req = std::move(request);
  d->exec = impl_;
  DeliveryHandle handle(d);
  impl_->submit(d, describe(checked.error()));
  return handle;
}

// H2, T1: the remote and the proxy as validate() read them; a request
// changed since (or never validated) is judged again, never trusted.
DeliveryHandle Executor::submit(CheckedRequest request) {
  if (!request.valid() || !request.parts()->still_describes(request.request())) {
    return submit(DeliveryRequest(std::move(request.request())));
  }
  auto d = std::make_shared<DeliveryHandle::Shared>();
  d->id = impl_->next_id++;
  const CheckedParts& parts = *request.parts();
  d->lane = parts.remote.lane;
  d->remote = parts.remote.canonical;
  d->proxy = parts.proxy;
  d->updates = parts.updates;
  d->atomic = request.atomic();
  d->req = std::move(request.request());
  d->exec = impl_;
  DeliveryHandle handle(d);
  impl_->submit(d, std::nullopt);
  return handle;
}

std::uint64_t Executor::spawned() const { return impl_->spawned.load(); }

Result<std::vector<Outcome>> Executor::recover() { return impl_->run_recovery(); }

const Result<std::vector<Outcome>>& Executor::recovered_at_start() const { return impl_->recovered; }

std::int64_t Executor::wait_warm_child(std::chrono::milliseconds timeout) const {
  impl_->warm->wait_usable(1, timeout);
  const auto pids = impl_->warm->pids();
  return pids.empty() ? 0 : pids.front();
}

std::int64_t Executor::warm_child_pid() const { return wait_warm_child(std::chrono::milliseconds(0)); }

std::size_t Executor::warm_ready() const { return impl_->warm->usable(); }

std::size_t Executor::wait_warm_ready(std::size_t n, std::chrono::milliseconds timeout) const {
  return impl_->warm->wait_usable(n, timeout);
}

std::vector<std::int64_t> Executor::warm_child_pids() const { return impl_->warm->pids(); }

const std::string& Executor::lane_dir() const { return impl_->opt.lane_dir; }

}  // namespace courier
