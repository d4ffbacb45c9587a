// verdict.cpp — the verdict: observed facts in, the Outcome out. Pure.
#include "supervisor/verdict.hpp"

#include "supervisor/ref_verdict.hpp"

#include <csignal>
#include <cstring>

namespace courier::supervisor {

namespace {

// What only the remote can say: the report's answer, or no POST needed.
bool is_remote_answer(OutcomeKind k) {
  return k == OutcomeKind::delivered || k == OutcomeKind::up_to_date || k == OutcomeKind::rejected;
}

// A failure the child reports at or after a deadline kill is the deadline's
// doing (its own timeouts race our kill); a remote's answer is not.
bool result_stands(const StopFacts& f) {
  if (!f.result || f.result_after_revocation) return false;
  const bool remote_answer = is_remote_answer(kind_from_status(f.result->status));
  const bool after_kill = (f.cause == StopCause::deadline && f.result_ns >= f.deadline) ||
                          (f.cause == StopCause::lease && f.result_ns >= f.lease_bound);
  return !(after_kill && !remote_answer);
}

// L2: the child's own lease timer killed its process group — the leader
// died of SIGKILL, at or after the bound, with no kill of ours first.
bool killed_by_own_lease_timer(const StopFacts& f) {
  const ChildFacts& c = f.observed.child;
  return f.lease_bound != 0 && (f.cause == StopCause::none || f.cause == StopCause::leader_exit) && c.signal &&
         *c.signal == SIGKILL && f.observed.timings.exited >= f.lease_bound;
}

// Every ref's old id as the result names it (the session took only a
// result that names the job's refs in the job's order); their statuses
// only from a result that stands (take_result).
void take_ref_old_oids(const protocol::ResultMsg& r, Outcome& out) {
  for (std::size_t i = 0; i < r.refs.size() && i < out.refs.size(); ++i) {
    if (r.refs[i].old_oid) out.refs[i].old_oid = r.refs[i].old_oid;
  }
  if (!out.refs.empty() && out.refs.front().old_oid) out.old_oid = out.refs.front().old_oid;
}

// What a result says of the delivery's work, whether or not its status
// stands: the child's own figures replace what the frames said.
void take_facts(const protocol::ResultMsg& r, Outcome& out) {
  take_ref_old_oids(r, out);
  if (r.pack_engine) out.pack_engine = r.pack_engine;
  if (r.advertise_ms) out.advertise_ms = r.advertise_ms;
  if (r.pack_ms) out.pack_ms = r.pack_ms;
  if (r.upload_ms) out.upload_ms = r.upload_ms;
  if (r.bytes_sent) out.bytes_sent = r.bytes_sent;
  if (r.objects) out.objects = r.objects;
  out.remote_messages = r.remote_messages;
  out.remote_messages_dropped = r.remote_messages_dropped.value_or(0);
}

// A standing result: its kind and words, and each ref's status, unless it
// misstates a ref against what was sent (T4): then the child broke the
// protocol, and every sent ref stays unknown.
void take_result(const protocol::ResultMsg& r, Outcome& out) {
  const OutcomeKind kind = kind_from_status(r.status);
  if (is_remote_answer(kind)) {
    if (auto wrong = misreported_ref(out, r)) {
      out.kind = OutcomeKind::protocol_fault;
      out.reason = *wrong;
      return;
    }
  }
  out.kind = kind;
  out.reason = r.reason.value_or("");
  if (r.detail) out.reason += ": " + *r.detail;
  take_ref_statuses(r, is_remote_answer(kind), out);
}

// Our own stop came first (J5): the deadline, a revocation, the lease.
// What follows it (a frame cut short, a failure the child then reports) is
// its doing. A deadline kill that found the child already dying did not
// end it.
bool own_stop_first(const StopFacts& f) {
  if (f.cause == StopCause::revoked || f.cause == StopCause::lease || f.cause == StopCause::job_refused) return true;
  if (f.cause != StopCause::deadline) return false;
  // Found already dying: a signal killed it before ours, unless it ended
  // by itself (an exit, no signal). The child keeps the same absolute
  // deadline (D1) and gives up at it too, so an exit racing our kill at
  // the deadline is the deadline's doing, whatever it left half-written.
  return !f.exiting_at_kill || !f.observed.child.signal;
}

// J5: the leader died by a signal this process did not send: any signal
// but SIGKILL, or a SIGKILL with no kill of ours before it (none at all,
// or ours found the leader already dying).
bool foreign_signal(const StopFacts& f) {
  const ChildFacts& c = f.observed.child;
  if (!c.signal) return false;
  const bool no_kill_of_ours = f.cause == StopCause::none || f.cause == StopCause::leader_exit;
  return *c.signal != SIGKILL || no_kill_of_ours || f.exiting_at_kill;
}

// What a person can do about a signal we did not send.
std::string signal_hint(int sig) {
  switch (sig) {
    case SIGKILL:
      return "the OOM killer, or another process; see dmesg (journalctl -k) for an out-of-memory kill";
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGABRT:
      return "the child crashed: a bug in git-courier or a library it loads; its stderr says more, please report it";
    default:
      return "another process sent it (a service manager stopping the unit, a user, a script)";
  }
}

void take_foreign_signal(const StopFacts& f, Outcome& out) {
  const int sig = *out.child.signal;
  const char* abbrev = sigabbrev_np(sig);
  out.kind = OutcomeKind::child_signalled;
  out.reason = "the child was killed by signal " + std::to_string(sig) + " (SIG" + (abbrev ? abbrev : "?") +
               ") that git-courier did not send: " + signal_hint(sig);
  if (f.fault) out.reason += " (its output then ended: " + *f.fault + ")";
}

std::string exit_text(const ChildFacts& c) {
  return c.signal ? "signal " + std::to_string(*c.signal) : "exit code " + std::to_string(c.exit_code.value_or(-1));
}

}  // namespace

OutcomeKind kind_from_status(wire::DeliveryStatus status) {
  switch (status) {
    case wire::DeliveryStatus::delivered:
      return OutcomeKind::delivered;
    case wire::DeliveryStatus::up_to_date:
      return OutcomeKind::up_to_date;
    case wire::DeliveryStatus::rejected:
      return OutcomeKind::rejected;
    case wire::DeliveryStatus::auth_failed:
      return OutcomeKind::auth_failed;
    case wire::DeliveryStatus::transport_failed:
      return OutcomeKind::transport_failed;
    case wire::DeliveryStatus::failed:
      return OutcomeKind::failed;
  }
  return OutcomeKind::failed;
}

bool stop_confirmed(const ChildFacts& c) {
  return c.reaped && c.stdout_eof && c.stderr_eof && (!c.cgroup || c.cgroup_empty);
}

BoundVerdict bound_expired(const BoundFacts& f) {
  BoundVerdict v;
  if (f.reaped) {
    if (!f.child.stdout_eof || !f.child.stderr_eof) {
      v.action = BoundAction::unconfirmed;
      v.unconfirmed = {OutcomeKind::cleanup_unbounded,
                       "end-of-file not seen on the child's " + std::string(!f.child.stdout_eof ? "stdout" : "stderr") +
                           " within EOF_BOUND (" + std::to_string(f.eof_bound / sys::kNsPerMs) +
                           " ms) after the reap: a process outside the kill domain holds it"};
    } else if (f.child.cgroup && !f.child.cgroup_empty) {
      v.action = BoundAction::unconfirmed;
      v.unconfirmed = {OutcomeKind::domain_populated,
                       "the child's cgroup " + f.cgroup_path + " was still populated EOF_BOUND after the kill"};
    }
  } else if (f.killed) {
    v.action = BoundAction::unconfirmed;
    v.unconfirmed = {OutcomeKind::unreaped, "the child " + std::to_string(f.child.pid) +
                                                " did not exit within REAP_BOUND (" +
                                                std::to_string(f.reap_bound / sys::kNsPerMs) + " ms) after SIGKILL"};
  } else if (f.result) {
    v.action = BoundAction::stop_after_result;
  }
  return v;
}

RemoteEffect remote_effect_of(const Outcome& o) {
  if (o.timings.post_started == 0) return RemoteEffect::none;
  if (o.kind == OutcomeKind::delivered) return RemoteEffect::applied;
  if (o.kind == OutcomeKind::rejected) return RemoteEffect::refused;
  return RemoteEffect::possible;
}

namespace {

// What the confirmation covered, for the reason of a killed child: a cgroup
// is seen whole; a process group only as far as its members stayed in it.
std::string confirmed_scope(const ChildFacts& c) {
  if (c.cgroup) return "stop confirmed (cgroup empty)";
  if (c.subreaped) return "stop confirmed (process group and every orphan)";
  return "stop confirmed for its process group (a member that left the group and closed its pipes would not be seen)";
}

// The facts every outcome carries, whatever decided it.
void finish_facts(const StopFacts& f, Outcome& out) {
  if (!out.bytes_sent) out.bytes_sent = f.upload_done.value_or(0);
  if (out.dispatched) out.kill_domain = out.child.cgroup ? "cgroup" : "process_group";
  if (f.cause == StopCause::revoked) {
    out.revoke_cause = f.revoke_reason;
    out.revoked_by = f.revoke_by;
  }
  if (f.cause == StopCause::lease) {
    out.revoke_cause = std::string(kLeaseLostCause);
    out.revoked_by = RevokeCause::lease_lost;
  }
  settle_refs(out);
}

}  // namespace

Outcome verdict(StopFacts f) {
  if (!f.unconfirmed && !f.fault && !f.result && killed_by_own_lease_timer(f)) f.cause = StopCause::lease;
  Outcome out = std::move(f.observed);
  if (f.unconfirmed) {
    out.kind = f.unconfirmed->kind;
    out.reason = f.unconfirmed->reason + "; the seat is retained";
    if (f.cause == StopCause::revoked) {
      // A revocation whose kill could not be confirmed: the caller cancelled,
      // and the work may still run.
      out.stop_failure = out.kind;
      out.kind = OutcomeKind::cancel_uncertain;
      out.reason = "revoked (" + f.revoke_reason + "), but the stop could not be confirmed: " + out.reason;
    }
    finish_facts(f, out);
    return out;
  }
  if (f.result) take_facts(*f.result, out);
  if (f.fault && !own_stop_first(f)) {
    if (foreign_signal(f)) {
      take_foreign_signal(f, out);
    } else {
      out.kind = OutcomeKind::protocol_fault;
      out.reason = *f.fault;
    }
  } else if (result_stands(f)) {
    take_result(*f.result, out);
  } else if (f.cause == StopCause::job_refused) {
    // Nothing was sent: the child never had its job (A5: an unknown host).
    out.kind = OutcomeKind::transport_failed;
    out.reason = f.job_refused;
  } else if (f.cause == StopCause::deadline && own_stop_first(f)) {
    out.kind = OutcomeKind::deadline_killed;
    out.reason = "killed at the deadline; " + confirmed_scope(out.child);
  } else if (f.cause == StopCause::revoked) {
    out.kind = OutcomeKind::revoked;
    out.reason = "revoked: " + f.revoke_reason + "; child killed, " + confirmed_scope(out.child);
  } else if (f.result_after_revocation) {
    // The revocation won before the child's result (revoke() said
    // `stopping`): the result gives its facts, never the outcome (J5).
    out.kind = OutcomeKind::revoked;
    out.reason = "revoked" + (f.revoke_reason.empty() ? std::string() : ": " + f.revoke_reason) +
                 "; the child's result came after the revocation and does not stand";
  } else if (f.cause == StopCause::lease) {
    out.kind = OutcomeKind::revoked;
    out.reason = "revoked: the lane's lease was not renewed in time; child killed at the lease bound (" +
                 std::to_string((f.deadline - f.lease_bound) / sys::kNsPerMs) + " ms before the deadline), " +
                 confirmed_scope(out.child);
  } else if (foreign_signal(f)) {
    take_foreign_signal(f, out);
  } else {
    out.kind = OutcomeKind::protocol_fault;
    out.reason = "the child exited without a result (" + exit_text(out.child) + ")";
  }
  finish_facts(f, out);
  return out;
}

}  // namespace courier::supervisor
