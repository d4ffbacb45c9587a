// unit-verdict.cpp — the verdict (src/supervisor/verdict.*): observed facts
// in, the outcome out, with no process, descriptor or clock. Each case names
// the rule it proves (S2, S3, P1, D1, A4).
#include <doctest/doctest.h>

#include "supervisor/verdict.hpp"

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
    CHECK(o.reason == "revoked: caller gave up; child killed, stop confirmed");
  }

  TEST_CASE("P1: a child that exits without a result is a protocol fault naming how it ended") {
    StopFacts f = confirmed_stop(StopCause::leader_exit);
    CHECK(verdict(f).reason == "the child exited without a result (signal 9)");
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
}
