// verdict.cpp — the verdict (src/supervisor/verdict.*): observed facts
// in, the outcome out, with no process, descriptor or clock. Each case names
// the rule it proves (S2, S3, P1, D1, A4).
#include <doctest/doctest.h>

#include "supervisor/verdict.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_verdict {

using namespace courier;
using namespace courier::supervisor;
using sys::kNsPerMs;

namespace {

ChildFacts stopped(bool cgroup = false) {
  ChildFacts c;
  c.pid = 4242;
  c.reaped = true;
  c.stdout_eof = true;
  c.stderr_eof = true;
  c.cgroup = cgroup;
  c.cgroup_empty = cgroup;
  c.signal = 9;
  return c;
}

protocol::ResultMsg result(const std::string& status) {
  protocol::ResultMsg r;
  r.status = wire::status_from_word(status).value();
  r.reason = "why";
  return r;
}

StopFacts confirmed_stop(StopCause cause) {
  StopFacts f;
  f.observed.child = stopped();
  f.cause = cause;
  f.deadline = 1000 * kNsPerMs;
  return f;
}

BoundFacts bound_after_reap() {
  BoundFacts f;
  f.child = stopped();
  f.reaped = true;
  f.killed = true;
  f.reap_bound = 5000 * kNsPerMs;
  f.eof_bound = 5000 * kNsPerMs;
  return f;
}

}  // namespace

TEST_SUITE("verdict") {
  TEST_CASE("S2: a child reaped with end-of-file on both pipes is a confirmed stop") {
    CHECK(stop_confirmed(stopped()));
    CHECK(stop_confirmed(stopped(true)));
  }

  TEST_CASE("S2: a child not reaped is never a confirmed stop") {
    ChildFacts c = stopped();
    c.reaped = false;
    CHECK_FALSE(stop_confirmed(c));
  }

  TEST_CASE("S2: a reaped child without end-of-file on stdout or on stderr is not a confirmed stop") {
    ChildFacts out = stopped();
    out.stdout_eof = false;
    CHECK_FALSE(stop_confirmed(out));
    ChildFacts err = stopped();
    err.stderr_eof = false;
    CHECK_FALSE(stop_confirmed(err));
  }

  TEST_CASE("S2: a child in a cgroup still populated is not a confirmed stop") {
    ChildFacts c = stopped(true);
    c.cgroup_empty = false;
    CHECK_FALSE(stop_confirmed(c));
  }

  TEST_CASE("S3: an unconfirmed stop is the outcome, whatever else was seen, and the seat is retained") {
    StopFacts f = confirmed_stop(StopCause::deadline);
    f.result = result("delivered");
    f.fault = "a fault";
    f.unconfirmed = Unconfirmed{OutcomeKind::unreaped, "the child did not exit"};
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::unreaped);
    CHECK(o.reason == "the child did not exit; the seat is retained");
    CHECK(o.seat() == SeatDisposition::retain);
  }

  TEST_CASE("P1: a protocol fault is the outcome even when a result came") {
    StopFacts f = confirmed_stop(StopCause::protocol_fault);
    f.fault = "second hello";
    f.result = result("delivered");
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::protocol_fault);
    CHECK(o.reason == "second hello");
    CHECK(o.seat() == SeatDisposition::release);
  }

  TEST_CASE("S2: a child's result stands once its stop is confirmed, with its figures") {
    StopFacts f = confirmed_stop(StopCause::leader_exit);
    f.result = result("delivered");
    f.result->detail = "ok";
    f.result->bytes_sent = 77;
    f.upload_done = 10;
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::delivered);
    CHECK(o.reason == "why: ok");
    CHECK(o.bytes_sent == std::optional<std::uint64_t>(77));
  }

  TEST_CASE(
      "J5: a result that came after a revocation that won is never the outcome, whether or not the kill reached the "
      "child, and its figures stay") {
    for (StopCause cause : {StopCause::leader_exit, StopCause::revoked}) {
      CAPTURE(static_cast<int>(cause));
      StopFacts f = confirmed_stop(cause);
      f.result = result("delivered");
      f.result->bytes_sent = 77;
      f.result_after_revocation = true;
      f.revoke_reason = "no longer wanted";
      f.observed.timings.post_started = 5;
      const Outcome o = verdict(f);
      CHECK(o.kind == OutcomeKind::revoked);
      CHECK(o.reason.find("no longer wanted") != std::string::npos);
      CHECK(o.remote_effect == RemoteEffect::possible);
      CHECK(o.bytes_sent == std::optional<std::uint64_t>(77));
    }
  }

  TEST_CASE("D1: a failure the child reports at or after a deadline kill is the deadline's doing") {
    StopFacts f = confirmed_stop(StopCause::deadline);
    f.result = result("transport_failed");
    f.result_ns = f.deadline;
    CHECK(verdict(f).kind == OutcomeKind::deadline_killed);
    f.result_ns = f.deadline - 1;
    CHECK(verdict(f).kind == OutcomeKind::transport_failed);
  }

  TEST_CASE("D1: the remote's answer reported after a deadline kill still stands") {
    for (const char* status : {"delivered", "up_to_date", "rejected"}) {
      StopFacts f = confirmed_stop(StopCause::deadline);
      f.result = result(status);
      f.result_ns = f.deadline + 1;
      CHECK(verdict(f).kind == kind_from_status(wire::status_from_word(status).value()));
    }
  }

  TEST_CASE("D1: a child killed at the deadline without a result is deadline_killed, with the bytes it had uploaded") {
    StopFacts f = confirmed_stop(StopCause::deadline);
    f.upload_done = 4096;
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::deadline_killed);
    CHECK(o.bytes_sent == std::optional<std::uint64_t>(4096));
  }

  TEST_CASE("A4: a revoked child, its stop confirmed, is revoked with the revocation's reason") {
    StopFacts f = confirmed_stop(StopCause::revoked);
    f.revoke_reason = "caller gave up";
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::revoked);
    CHECK(o.reason ==
          "revoked: caller gave up; child killed, stop confirmed for its process group (a member that left the group "
          "and closed its pipes would not be seen)");
    CHECK(o.revoke_cause == "caller gave up");
  }

  TEST_CASE("A4 J2: in cgroup mode the confirmation says the cgroup was empty, and the outcome names its kill domain") {
    StopFacts f = confirmed_stop(StopCause::revoked);
    f.observed.child = stopped(true);
    f.observed.dispatched = true;
    f.revoke_reason = "caller gave up";
    const Outcome o = verdict(f);
    CHECK(o.reason == "revoked: caller gave up; child killed, stop confirmed (cgroup empty)");
    CHECK(o.kill_domain == "cgroup");
    f.observed.child = stopped(false);
    CHECK(verdict(f).kill_domain == "process_group");
  }

  TEST_CASE("J2: a child killed before the POST was cleared has remote_effect none") {
    for (auto cause : {StopCause::deadline, StopCause::revoked}) {
      StopFacts f = confirmed_stop(cause);
      const Outcome o = verdict(f);
      CHECK(o.remote_effect == RemoteEffect::none);
      CHECK(o.bytes_sent == std::optional<std::uint64_t>(0));
    }
  }

  TEST_CASE("J2: a child killed after the POST was cleared has remote_effect possible") {
    for (auto cause : {StopCause::deadline, StopCause::revoked, StopCause::protocol_fault}) {
      StopFacts f = confirmed_stop(cause);
      f.observed.timings.post_started = 500 * kNsPerMs;
      const Outcome o = verdict(f);
      CHECK_MESSAGE(o.remote_effect == RemoteEffect::possible,
                    "a kill after the POST was cleared reported remote_effect "
                        << std::string(remote_effect_name(o.remote_effect)));
    }
    // A transport failure the child reported after the POST began, too.
    StopFacts f = confirmed_stop(StopCause::after_result);
    f.observed.timings.post_started = 500 * kNsPerMs;
    f.result = result("transport_failed");
    CHECK(verdict(f).remote_effect == RemoteEffect::possible);
  }

  TEST_CASE("J2: applied and refused come only from a report read after the POST began") {
    StopFacts f = confirmed_stop(StopCause::after_result);
    f.observed.timings.post_started = 500 * kNsPerMs;
    f.result = result("delivered");
    CHECK(verdict(f).remote_effect == RemoteEffect::applied);
    f.result = result("rejected");
    CHECK(verdict(f).remote_effect == RemoteEffect::refused);
    // expect_old mismatch: rejected at the advertisement, nothing was sent.
    f.observed.timings.post_started = 0;
    CHECK(verdict(f).remote_effect == RemoteEffect::none);
    f.result = result("up_to_date");
    CHECK(verdict(f).remote_effect == RemoteEffect::none);
  }

  TEST_CASE(
      "J2 S3 A4: an unconfirmed stop caused by a revocation is cancel_uncertain, retains the seat, and keeps the "
      "unconfirmed kind") {
    StopFacts f = confirmed_stop(StopCause::revoked);
    f.revoke_reason = "caller gave up";
    f.unconfirmed = Unconfirmed{OutcomeKind::cleanup_unbounded, "end-of-file not seen"};
    f.observed.timings.post_started = 500 * kNsPerMs;
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::cancel_uncertain);
    CHECK(o.stop_failure == std::optional<OutcomeKind>(OutcomeKind::cleanup_unbounded));
    CHECK(o.seat() == SeatDisposition::retain);
    CHECK(o.remote_effect == RemoteEffect::possible);
    CHECK(o.reason.find("caller gave up") != std::string::npos);
    // The same failure at the deadline stays what it was.
    f.cause = StopCause::deadline;
    CHECK(verdict(f).kind == OutcomeKind::cleanup_unbounded);
  }

  TEST_CASE("P1: a child that exits without a result is a protocol fault naming how it ended") {
    StopFacts f = confirmed_stop(StopCause::leader_exit);
    f.observed.child.signal.reset();
    f.observed.child.exit_code = 3;
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::protocol_fault);
    CHECK(o.reason == "the child exited without a result (exit code 3)");
  }

  TEST_CASE("S3: end-of-file missing when EOF_BOUND after the reap is spent is cleanup_unbounded") {
    BoundFacts f = bound_after_reap();
    f.child.stderr_eof = false;
    const BoundVerdict v = bound_expired(f);
    CHECK(v.action == BoundAction::unconfirmed);
    CHECK(v.unconfirmed.kind == OutcomeKind::cleanup_unbounded);
    CHECK(v.unconfirmed.reason.find("stderr") != std::string::npos);
  }

  TEST_CASE("S3: a cgroup still populated when EOF_BOUND after the reap is spent is domain_populated") {
    BoundFacts f = bound_after_reap();
    f.child.cgroup = true;
    f.child.cgroup_empty = false;
    f.cgroup_path = "/sys/fs/cgroup/x";
    const BoundVerdict v = bound_expired(f);
    CHECK(v.action == BoundAction::unconfirmed);
    CHECK(v.unconfirmed.kind == OutcomeKind::domain_populated);
  }

  TEST_CASE("S3: a killed leader not reaped within REAP_BOUND is unreaped") {
    BoundFacts f = bound_after_reap();
    f.reaped = false;
    f.child.reaped = false;
    const BoundVerdict v = bound_expired(f);
    CHECK(v.action == BoundAction::unconfirmed);
    CHECK(v.unconfirmed.kind == OutcomeKind::unreaped);
  }

  TEST_CASE("S2: a child that sent its result and outstays its grace is stopped, not judged") {
    BoundFacts f;
    f.result = true;
    CHECK(bound_expired(f).action == BoundAction::stop_after_result);
  }

  TEST_CASE("S2: a stop confirmed within its bounds leaves the bound nothing to say") {
    CHECK(bound_expired(bound_after_reap()).action == BoundAction::none);
  }

  TEST_CASE(
      "J5: a child that died by a SIGKILL this process did not send is child_signalled, with the signal and a hint, "
      "never protocol_fault") {
    StopFacts f = confirmed_stop(StopCause::leader_exit);  // no kill of ours before the exit
    const Outcome o = verdict(f);
    CHECK_MESSAGE(o.kind == OutcomeKind::child_signalled, o.reason);
    CHECK(o.child.signal == std::optional<int>(9));
    CHECK(o.reason.find("signal 9 (SIGKILL) that git-courier did not send") != std::string::npos);
    CHECK(o.reason.find("OOM killer") != std::string::npos);
    CHECK(o.seat() == SeatDisposition::release);
  }

  TEST_CASE("J5: a frame cut short by a signal from outside is child_signalled, not a truncated-frame fault") {
    // The outside SIGKILL closed the child's pipes mid-frame; our kill for
    // the fault then found it already dying.
    StopFacts f = confirmed_stop(StopCause::protocol_fault);
    f.fault = "truncated frame at end of stream (3 of 40 bytes)";
    f.exiting_at_kill = true;
    const Outcome o = verdict(f);
    CHECK_MESSAGE(o.kind == OutcomeKind::child_signalled, o.reason);
    CHECK(o.reason.find("SIGKILL") != std::string::npos);
    // Our own kill for a fault it found alive: the fault stands.
    f.exiting_at_kill = false;
    CHECK(verdict(f).kind == OutcomeKind::protocol_fault);
  }

  TEST_CASE("J5 D1: a child that ends by itself at its deadline as our kill lands is deadline_killed, never a fault") {
    // The child gives up at the same absolute deadline (D1) and exits; our
    // kill at the deadline finds it already exiting. Whatever it left
    // behind (no result, or a frame cut short), the deadline decided.
    StopFacts f = confirmed_stop(StopCause::deadline);
    f.observed.child.signal.reset();
    f.observed.child.exit_code = 1;
    f.exiting_at_kill = true;
    Outcome o = verdict(f);
    CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
    f.fault = "truncated frame at end of stream (3 of 40 bytes)";
    o = verdict(f);
    CHECK_MESSAGE(o.kind == OutcomeKind::deadline_killed, o.reason);
    // Dying of a SIGKILL before ours at the deadline: someone else's signal.
    f.observed.child.exit_code.reset();
    f.observed.child.signal = 9;
    CHECK(verdict(f).kind == OutcomeKind::child_signalled);
  }

  TEST_CASE("J5: a crash signal is child_signalled with a crash hint, even after a kill of ours") {
    StopFacts f = confirmed_stop(StopCause::leader_exit);
    f.observed.child.signal = 11;
    const Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::child_signalled);
    CHECK(o.reason.find("signal 11 (SIGSEGV)") != std::string::npos);
    CHECK(o.reason.find("crashed") != std::string::npos);
  }

  TEST_CASE("J5: our own kill wins over the frame it cut short: deadline_killed or revoked, not protocol_fault") {
    for (StopCause cause : {StopCause::deadline, StopCause::revoked, StopCause::lease}) {
      StopFacts f = confirmed_stop(cause);
      f.revoke_reason = "the buyer cancelled";
      f.fault = "truncated frame at end of stream (3 of 40 bytes)";
      const Outcome o = verdict(f);
      CHECK_MESSAGE(o.kind == (cause == StopCause::deadline ? OutcomeKind::deadline_killed : OutcomeKind::revoked),
                    o.reason);
    }
  }

  TEST_CASE("J4: a killed delivery keeps the old id, the engine, the bytes and the phases its frames named") {
    StopFacts f = confirmed_stop(StopCause::deadline);
    f.observed.old_oid = std::string(40, 'a');
    f.observed.pack_engine = "git";
    f.observed.advertise_ms = 4;
    f.observed.pack_ms = 50;
    f.observed.upload_ms = 900;
    f.upload_done = 1 << 20;
    Outcome o = verdict(f);
    CHECK(o.kind == OutcomeKind::deadline_killed);
    CHECK(o.old_oid == std::optional<std::string>(std::string(40, 'a')));
    CHECK(o.pack_engine == std::optional<std::string>("git"));
    CHECK(o.bytes_sent == std::optional<std::uint64_t>(1 << 20));
    CHECK(o.upload_ms == std::optional<std::uint64_t>(900));
    // A failure reported after the kill does not stand, but its own figures do.
    f.result = result("transport_failed");
    f.result_ns = f.deadline;
    f.result->bytes_sent = 2 << 20;
    f.result->upload_ms = 950;
    o = verdict(f);
    CHECK(o.kind == OutcomeKind::deadline_killed);
    CHECK(o.old_oid == std::optional<std::string>(std::string(40, 'a')));
    CHECK(o.bytes_sent == std::optional<std::uint64_t>(2 << 20));
    CHECK(o.upload_ms == std::optional<std::uint64_t>(950));
  }
}

}  // namespace unit_verdict
