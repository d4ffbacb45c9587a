// early_child.cpp — a child started ahead of its executor, so that its exec
// and library loading overlap the host's own checks; released unused, it
// is stopped and confirmed like any other child (S5).
#include "seat/early_child.hpp"

#include <cstdio>

#include "sys/clock.hpp"
#include "sys/mutex.hpp"

namespace courier {

EarlyChild::~EarlyChild() {
  if (slot_ && settle_) settle_();
  if (slot_) slot_->retire("not needed: no delivery took it");
}

std::shared_ptr<seat::WarmSlot> EarlyChild::take() {
  if (slot_ && settle_) settle_();
  return std::move(slot_);
}

supervisor::SupervisorOptions warm_child_options(const ExecutorOptions& opt,
                                                 std::function<void(std::string_view)> on_event) {
  supervisor::SupervisorOptions wo;
  wo.child_program = opt.child_program;
  wo.cgroup = opt.cgroup;
  wo.subreaper = opt.subreaper;
  wo.reap_bound = opt.reap_bound;
  wo.eof_bound = opt.eof_bound;
  wo.on_stderr = opt.on_child_stderr;
  wo.on_event = std::move(on_event);
  return wo;
}

namespace {

// Spawned, or its supervisor returned without a child: either way the
// early child's fate is settled, and a job can be assigned or refused.
struct Settled {
  sys::Mutex mu;
  sys::CondVar cv;
  bool done COURIER_GUARDED_BY(mu) = false;

  void set() {
    sys::MutexLock lock(mu);
    done = true;
    cv.notify_all();
  }
  // Bounded: a spawn never takes this long; past it the delivery may
  // find the child not yet assignable and take a cold one instead.
  void wait() {
    const sys::MonoNs until = sys::mono_now_ns() + 2'000 * sys::kNsPerMs;
    sys::MutexLock lock(mu);
    while (!done && cv.wait_until(lock, until)) {
    }
  }
};

}  // namespace

std::shared_ptr<EarlyChild> start_early_child(const ExecutorOptions& how) {
  auto sink = [on_log = how.on_log](std::string_view line) {
    if (on_log) {
      on_log(line);
    } else {
      std::fprintf(stderr, "git-courier: %.*s\n", static_cast<int>(line.size()), line.data());
    }
  };
  auto settled = std::make_shared<Settled>();
  supervisor::SupervisorOptions wo = warm_child_options(how, sink);
  wo.on_spawned = [settled](std::int64_t) { settled->set(); };
  auto slot = seat::WarmPool::spawn(std::move(wo), nullptr, [settled] { settled->set(); });
  // Nothing is waited for here: the spawn (on the child's supervising
  // thread), the child's exec and its library loading all overlap the
  // host's checks. The spawn is waited for where it matters: when an
  // executor adopts the child (a job can then be assigned to it at once),
  // or before an unused one is stopped (so that it is stopped, not left to
  // be spawned after).
  return std::make_shared<EarlyChild>(std::move(slot), [settled] { settled->wait(); });
}

}  // namespace courier
