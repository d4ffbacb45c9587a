// turn_options.cpp — what a turn's supervisor is told: the job, the bounds,
// and the observers through which the child's life reaches the delivery
// (progress, the spawn, the result against a revocation, the write-ahead
// entry before the POST).
#include "seat/executor_core.hpp"
#include "seat/ssh_delivery.hpp"
#include "seat/turn.hpp"

namespace courier::seat {

using supervisor::SupervisorOptions;

namespace {

using Weak = std::weak_ptr<DeliveryHandle::Shared>;

// J5: the child's result against a revocation, on the claim word: the
// first to move it out of claimed wins (a repeated result stays answered).
std::function<bool()> result_first(const Weak& weak) {
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
std::function<Result<void>(const protocol::Check&)> write_ahead(const Weak& weak) {
  return [weak](const protocol::Check& post) -> Result<void> {
    auto s = weak.lock();
    if (!s) return fail(Errc::journal_failed, "the delivery is gone");
    // The refs whose commands go in the POST, in the request's order (a
    // check naming none: every ref).
    std::vector<std::string> sent;
    for (const RefUpdate& u : s->updates) {
      if (post.old_oids.empty() || post.old_oids.count(u.ref) != 0) sent.push_back(u.ref);
    }
    return s->record.post_started(post.old_oids, sent);
  };
}

// The child's progress, as the delivery's progress events.
std::function<void(const protocol::Progress&)> progress_relay(const Weak& weak) {
  return [weak](const protocol::Progress& p) {
    if (auto s = weak.lock()) {
      s->record.advertised(p.old_oids);  // J4: journalled at the advertisement
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
std::function<void(std::int64_t)> spawn_observer(Executor::Impl& exec, const Weak& weak) {
  return [&exec, weak](std::int64_t pid) {
    auto s = weak.lock();
    if (!s) return;
    {
      // Observers run off the supervising loop: this may come late, after
      // the turn ended, and must not write over the next holder's record.
      sys::MutexLock lock(exec.mu);
      exec.lanes.child_spawned(s->lane, s->id, pid);
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

// The delivery's request as the child's job.
protocol::Job job_of(const DeliveryHandle::Shared& d) {
  protocol::Job job;
  job.repo = d.req.repo;
  job.remote = d.remote;
  job.updates = d.updates;
  job.atomic = d.atomic;
  job.push_options = d.req.push_options;
  job.redelivery = d.redelivery;
  job.authenticated = static_cast<bool>(d.req.mint);
  job.bind_payload = job.authenticated && d.req.mint_binds_payload;
  job.challenge_first = job.authenticated && d.req.mint_after_challenge;
  job.ca_file = d.req.ca_file;
  if (d.req.ca_file && !d.req.ca_source.empty()) job.ca_source = d.req.ca_source;
  if (d.proxy) job.proxy = d.proxy->url;
  job.allow_http_loopback = d.req.allow_http_loopback;
  job.remote_progress = d.req.remote_progress;
  if (d.req.pack_engine == PackEngine::git) {
    job.pack_git = d.req.git_program;
    job.pack_auto = d.engine_automatic;
  }
  return job;
}

}  // namespace

SupervisorOptions turn_options(Executor::Impl& exec, const DeliveryPtr& d) {
  const ExecutorOptions& opt = exec.opt;
  SupervisorOptions so;
  so.job = job_of(*d);
  if (d->proxy) so.proxy_authorization = d->proxy->authorization;
  so.deadline = d->deadline;
  if (d->lease) so.lease = d->lease_bound;  // L1: killed at min(deadline, lease bound)
  so.child_program = opt.child_program;
  so.cgroup = opt.cgroup;
  so.subreaper = opt.subreaper;
  so.reap_bound = opt.reap_bound;
  so.eof_bound = opt.eof_bound;
  so.mint = d->req.mint;
  so.authority = d->req.authority;
  so.fence = LeaseGate::fence_of(*d);  // L3: every mint carries the lease's fence
  so.on_stderr = opt.on_child_stderr;
  so.result_first = result_first(d);
  {
    sys::MutexLock lock(exec.mu);
    so.inherit_fd = exec.lanes.inherit_fd(d->lane);  // S6: the child holds the lane lock too
  }
  const Weak weak = d;
  so.on_progress = progress_relay(weak);
  so.on_event = exec.log_sink();
  so.on_spawned = spawn_observer(exec, weak);
  prepare_ssh(exec, d, so);  // A5: an ssh:// remote's agent, per child
  if (d->record.journalled()) {
    so.before_post = write_ahead(weak);
    so.before_authority_revoke = [weak](const std::string& words) {
      if (auto s = weak.lock()) s->authority_revoked(words);
    };
  }
  return so;
}

}  // namespace courier::seat
