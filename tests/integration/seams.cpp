// seams.cpp — where the executor's parts meet: a warm child's claim
// window (S5), the one writer of a delivery's outcome and wait()'s promise
// about the seat (J5, S2), a revocation's intent before its kill (J1), and
// a connection reset on a child's socket (S3).
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "courier/courier.hpp"
#include "fixture_server.hpp"
#include "journal/journal.hpp"
#include "seat/lane.hpp"
#include "support.hpp"
#include "sys/clock.hpp"
#include "sys/flock.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"
#include "wire/remote.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_seams {

using namespace courier;
using sys::kNsPerMs;

namespace {

// Scheduling slack on a loaded two-core machine, added to the product's own
// bound where a test measures one.
constexpr MonoNs kSlack = 100 * kNsPerMs;

ExecutorOptions options(const std::string& dir, bool warm, const std::string& journal = {}) {
  ExecutorOptions o;
  o.lane_dir = dir + "/lanes";
  o.journal = journal;
  o.workers = 1;
  o.warm_child = warm;
  o.child_program = warm ? COURIER_BINARY : COURIER_STANDIN;
  o.on_child_stderr = [](std::string_view) {};
  o.on_log = [](std::string_view) {};
  return o;
}

// A real push, for the warm child: a source repository and a bare remote.
struct WarmPush {
  test::TempDir dir;
  test::FixtureServer server;
  std::string tip;
  WarmPush() {
    server.create_bare_repo("seam");
    tip = test::make_source_repo(dir.path() + "/src", 2);
  }
  DeliveryRequest request() const {
    DeliveryRequest r;
    r.repo = dir.path() + "/src";
    r.remote = server.url("seam");
    r.ref = "refs/heads/main";
    r.oid = tip;
    r.budget = std::chrono::milliseconds(30'000);
    r.ca_file = server.ca_file();
    return r;
  }
  // The remote's ref, read back with git (empty: absent).
  std::string remote_ref() const {
    auto r = test::git({"--git-dir", server.repo_path("seam"), "rev-parse", "--verify", "-q", "refs/heads/main"});
    REQUIRE_MESSAGE((r.ok() || r.exit_code == 1), std::string("git could not read the remote: " + r.err));
    return r.ok() ? r.out.substr(0, 40) : std::string();
  }
};

// Hands a delivery's handle to host code that runs before submit() returns.
struct HandleSlot {
  std::promise<DeliveryHandle*> promise;
  std::shared_future<DeliveryHandle*> handle = promise.get_future().share();
  DeliveryHandle* get() const {
    REQUIRE(handle.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    return handle.get();
  }
};

}  // namespace

TEST_SUITE("seams") {
  TEST_CASE("S5: a revocation without words right after a warm child's claim ends the delivery; nothing is pushed") {
    WarmPush p;
    auto opt = options(p.dir.path(), true);
    auto slot = std::make_shared<HandleSlot>();
    opt.at_point_for_tests = [slot](std::uint64_t, std::string_view point) {
      if (point == "claimed") slot->get()->revoke("");
    };
    Executor ex(opt);
    REQUIRE(ex.wait_warm_child(std::chrono::milliseconds(20'000)) > 0);
    const std::int64_t warm = ex.warm_child_pid();
    DeliveryHandle h = ex.submit(p.request());
    slot->promise.set_value(&h);
    const Outcome o = h.wait();
    INFO(std::string(outcome_name(o.kind)), ": ", o.reason);
    CHECK_MESSAGE(o.kind != OutcomeKind::delivered, "the revocation after the claim was lost: the delivery ran");
    CHECK(o.kind == OutcomeKind::cancelled_no_dispatch);
    CHECK(o.remote_effect == RemoteEffect::none);
    CHECK(o.revoked_by == RevokeCause::caller);
    CHECK_MESSAGE(p.remote_ref().empty(), "the remote's ref was updated by a revoked delivery");
    CHECK_MESSAGE(sys::pid_exists(static_cast<pid_t>(warm)), "the unused warm child was killed");
    // The read-back sees a push when there is one: the same remote, not
    // revoked this time (the hook's revocation reaches the first, finished
    // delivery and does nothing), delivers and is read back.
    const Outcome next = ex.submit(p.request()).wait();
    CHECK_MESSAGE(next.kind == OutcomeKind::delivered, next.reason);
    CHECK(p.remote_ref() == p.tip);
  }

  TEST_CASE(
      "S5: a revocation without words at a warm child's hand-over stops and confirms that child; nothing is "
      "pushed") {
    WarmPush p;
    auto opt = options(p.dir.path(), true);
    struct Current {
      std::mutex mu;
      std::condition_variable cv;
      DeliveryHandle* handle = nullptr;
    };
    auto current = std::make_shared<Current>();
    opt.at_point_for_tests = [current](std::uint64_t delivery, std::string_view point) {
      if (point != "assigned") return;
      std::unique_lock<std::mutex> lock(current->mu);
      REQUIRE(current->cv.wait_for(lock, std::chrono::seconds(20),
                                   [&] { return current->handle && current->handle->id() == delivery; }));
      current->handle->revoke("");
    };
    Executor ex(opt);
    // Assigned, the warm child is this delivery's: the revocation reaches
    // it whatever its words. Either it had not taken the job yet (no child
    // was given it: cancelled_no_dispatch, S5) or it had (revoked); in both
    // its stop is confirmed before the outcome, and it never pushes.
    constexpr int kTries = 4;
    int ended = 0;
    for (int i = 0; i < kTries; ++i) {
      const std::int64_t warm = ex.wait_warm_child(std::chrono::milliseconds(20'000));
      REQUIRE(warm > 0);
      DeliveryHandle h = ex.submit(p.request());
      {
        std::lock_guard<std::mutex> lock(current->mu);
        current->handle = &h;
      }
      current->cv.notify_all();
      const Outcome o = h.wait();
      {
        std::lock_guard<std::mutex> lock(current->mu);
        current->handle = nullptr;
      }
      INFO("try ", i, ": ", std::string(outcome_name(o.kind)), ": ", o.reason);
      CHECK_MESSAGE(o.kind != OutcomeKind::delivered, "the revocation at the hand-over was lost: the delivery ran");
      CHECK_MESSAGE(!is_unconfirmed(o.kind), "a killed warm child's stop was not confirmed");
      CHECK((o.kind == OutcomeKind::cancelled_no_dispatch || o.kind == OutcomeKind::revoked));
      CHECK(o.revoked_by == RevokeCause::caller);
      CHECK(o.seat() == SeatDisposition::release);
      CHECK_MESSAGE(!sys::pid_exists(static_cast<pid_t>(warm)), "the warm child assigned to it outlived the outcome");
      if (o.kind == OutcomeKind::cancelled_no_dispatch || o.kind == OutcomeKind::revoked) ++ended;
    }
    test::report("warm hand-over", "revoked, child stopped and confirmed", ended, "of 4");
    CHECK(p.remote_ref().empty());
  }

  TEST_CASE(
      "S5: a withdrawal leaves a claimed delivery to run and finish, and cancels the one queued behind it "
      "before any child") {
    WarmPush p;
    auto opt = options(p.dir.path(), true);
    auto slot = std::make_shared<HandleSlot>();
    auto answer = std::make_shared<std::promise<RevokeAnswer>>();
    auto go = std::make_shared<std::promise<void>>();
    auto go_now = go->get_future().share();
    opt.at_point_for_tests = [slot, answer, go_now](std::uint64_t delivery, std::string_view point) {
      if (point != "claimed" || delivery != slot->get()->id()) return;
      answer->set_value(slot->get()->withdraw("the host is stopping", RevokeCause::shutdown));
      REQUIRE(go_now.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    };
    Executor ex(opt);
    REQUIRE(ex.wait_warm_child(std::chrono::milliseconds(20'000)) > 0);
    DeliveryHandle live = ex.submit(p.request());
    slot->promise.set_value(&live);
    // The first is claimed and held at its claim: its seat is taken, so the
    // second waits for the lane.
    auto first_answer = answer->get_future();
    REQUIRE(first_answer.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    CHECK(first_answer.get() == RevokeAnswer::too_late);
    DeliveryHandle queued = ex.submit(p.request());
    CHECK(queued.withdraw("the host is stopping", RevokeCause::shutdown) == RevokeAnswer::cancelled);
    const Outcome q = queued.wait();
    CHECK(q.kind == OutcomeKind::cancelled_no_dispatch);
    CHECK(q.revoked_by == RevokeCause::shutdown);
    go->set_value();
    const Outcome o = live.wait();
    INFO(std::string(outcome_name(o.kind)), ": ", o.reason);
    CHECK_MESSAGE(o.kind == OutcomeKind::delivered, "a withdrawal stopped a claimed delivery");
    CHECK_FALSE(o.revoked_by.has_value());
    CHECK(p.remote_ref() == p.tip);
    CHECK(ex.spawned() == 1);
  }

  TEST_CASE("S3: a connection reset on a child's socket is end-of-file, not a failed read") {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
    sys::ScopedFd parent(sv[0]);
    // What a warm child killed before reading its job leaves: our bytes
    // unread in its socket when its last descriptor closes.
    const char job[] = "the job";
    REQUIRE(::write(parent.get(), job, sizeof job) == static_cast<ssize_t>(sizeof job));
    ::close(sv[1]);
    char buf[16];
    auto r = sys::read_nonblocking(parent.get(), buf, sizeof buf);
    REQUIRE_MESSAGE(r.has_value(), "the reset was reported as a failed read: ", r ? "" : r.error().message);
    CHECK(r->status == sys::ReadStatus::eof);
  }

  TEST_CASE(
      "J5 S2: a revocation while a worker holds the seat before its claim: wait() returns after the seat is back") {
    test::TempDir dir;
    auto opt = options(dir.path(), false);
    Executor ex(opt);
    DeliveryRequest r;
    r.repo = "deliver";
    r.remote = "https://127.0.0.1:9/one-writer.git";
    r.ref = "refs/heads/main";
    r.oid = std::string(40, 'a');
    r.budget = std::chrono::milliseconds(20'000);
    auto slot = std::make_shared<HandleSlot>();
    auto waiter_done = std::make_shared<test::Latch>();
    // The callback has finished (the waiter thread assigned, held_ms set):
    // a wait() that returns at once opens waiter_done before the thread
    // object is assigned, so join only after this.
    auto callback_done = std::make_shared<test::Latch>();
    auto seat_free_at_return = std::make_shared<std::atomic<int>>(-1);
    const std::string lanes = dir.path() + "/lanes";
    const std::string lock_name = seat::lane_lock_name(*wire::lane_key(r.remote));
    std::thread waiter;
    MonoNs held_ms = 0;
    r.on_event = [&, slot, waiter_done, callback_done, seat_free_at_return](const DeliveryEvent& e) {
      if (e.kind != DeliveryEvent::Kind::seat_granted) return;
      // The worker holds the seat and has not claimed: revoke now, and let
      // another thread wait for the outcome while the seat is still held.
      DeliveryHandle* h = slot->get();
      h->revoke("changed my mind at the seat");
      waiter = std::thread([h, waiter_done, seat_free_at_return, lanes, lock_name] {
        (void)h->wait();
        auto lane_dir = sys::LaneDir::open(lanes);
        REQUIRE(lane_dir.has_value());
        auto lock = sys::LockFile::open(*lane_dir, lock_name);
        const bool free = lock && lock->try_lock().value_or(false);
        if (free) lock->unlock();
        seat_free_at_return->store(free ? 1 : 0);
        waiter_done->open();
      });
      // Give wait() every chance to return early while the seat is held.
      const MonoNs from = sys::mono_now_ns();
      (void)waiter_done->wait(500);
      held_ms = (sys::mono_now_ns() - from) / kNsPerMs;
      callback_done->open();
    };
    DeliveryHandle h = ex.submit(r);
    slot->promise.set_value(&h);
    REQUIRE(waiter_done->wait(20'000));
    REQUIRE(callback_done->wait(20'000));
    waiter.join();
    const Outcome o = h.wait();
    test::report("one writer", "seat held after the revocation, wait() not returned", static_cast<double>(held_ms),
                 "ms");
    CHECK(o.kind == OutcomeKind::cancelled_no_dispatch);
    CHECK(o.revoked_by == RevokeCause::caller);
    CHECK_MESSAGE(
        seat_free_at_return->load() == 1,
        "wait() returned while the seat was still held (the revoker wrote the outcome, not the seat's worker)");
    CHECK(ex.spawned() == 0);
  }
}

namespace {

// Holds the journal's write lock from a connection of the test's own, as
// another process's long transaction would, until released.
class JournalWriteLock {
 public:
  explicit JournalWriteLock(const std::string& path) {
    REQUIRE(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  void release() {
    if (!db_) return;
    (void)sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
  }
  ~JournalWriteLock() { release(); }

 private:
  sqlite3* db_ = nullptr;
};

// The steps of a delivery's latest attempt, in journal order.
std::vector<std::string> steps_of(const std::string& journal_path, const std::string& id) {
  auto j = journal::open_sqlite(journal_path);
  REQUIRE(j.has_value());
  auto r = (*j)->find(id);
  REQUIRE(r.has_value());
  REQUIRE(r->has_value());
  std::vector<std::string> out;
  for (const auto& e : (*r)->latest()) out.emplace_back(journal::step_name(e.step));
  return out;
}

std::ptrdiff_t index_of(const std::vector<std::string>& v, const std::string& s) {
  const auto it = std::find(v.begin(), v.end(), s);
  return it == v.end() ? -1 : it - v.begin();
}

// A wedged child's delivery, journalled, revoked once its child exists.
Outcome revoke_dispatched(Executor& ex, const std::string& id, const std::function<void()>& before = {},
                          const std::function<void()>& after = {}) {
  DeliveryRequest r;
  r.id = id;
  r.repo = "wedge";
  r.remote = "https://127.0.0.1:9/" + id + ".git";
  r.ref = "refs/heads/main";
  r.oid = std::string(40, 'b');
  r.budget = std::chrono::milliseconds(30'000);
  auto dispatched = std::make_shared<test::Latch>();
  r.on_event = [dispatched](const DeliveryEvent& e) {
    if (e.kind == DeliveryEvent::Kind::dispatched) dispatched->open();
  };
  DeliveryHandle h = ex.submit(r);
  REQUIRE(dispatched->wait(20'000));
  if (before) before();
  h.revoke("changed my mind");
  if (after) after();
  return h.wait();
}

}  // namespace

TEST_SUITE("seams") {
  TEST_CASE("J1: a live revocation's intent is durable before its kill, which follows within REVOKE_JOURNAL_BOUND") {
    test::TempDir dir;
    const std::string journal = dir.path() + "/journal.sqlite";
    Executor ex(options(dir.path(), false, journal));
    // The journal's fsync may take longer than the bound on a busy machine,
    // and then the kill rightly goes ahead: a few tries find a prompt one.
    int journalled = 0;
    for (int i = 0; i < 20 && journalled == 0; ++i) {
      const std::string id = "intent-" + std::to_string(i);
      const Outcome o = revoke_dispatched(ex, id);
      INFO(std::string(outcome_name(o.kind)), ": ", o.reason);
      REQUIRE(o.kind == OutcomeKind::revoked);
      CHECK(o.revoked_by == RevokeCause::caller);
      REQUIRE(o.timings.kill != 0);
      const double to_kill_ms = sys::ns_to_ms(o.timings.kill - o.timings.revoke);
      test::report("revocation", "revoke() to kill", to_kill_ms, "ms");
      CHECK(o.timings.kill - o.timings.revoke <= kRevokeJournalBound + kSlack);
      const auto steps = steps_of(journal, id);
      CHECK(index_of(steps, "revoke_requested") >= 0);
      CHECK(index_of(steps, "revoke_requested") < index_of(steps, "finished"));
      if (o.revoke_unjournalled) continue;
      ++journalled;
      REQUIRE(o.timings.revoke_journalled != 0);
      CHECK(o.timings.revoke <= o.timings.revoke_journalled);
      CHECK_MESSAGE(o.timings.revoke_journalled <= o.timings.kill,
                    "the kill came before the revocation's intent was durable");
      test::report("revocation", "intent durable to kill", sys::ns_to_ms(o.timings.kill - o.timings.revoke_journalled),
                   "ms");
    }
    CHECK_MESSAGE(journalled == 1, "no try journalled the intent within REVOKE_JOURNAL_BOUND");
  }

  TEST_CASE(
      "J1: a journal that cannot take the revocation within REVOKE_JOURNAL_BOUND does not hold the kill; the "
      "outcome says so and the late entry still precedes finished") {
    test::TempDir dir;
    const std::string journal = dir.path() + "/journal.sqlite";
    Executor ex(options(dir.path(), false, journal));
    std::unique_ptr<JournalWriteLock> lock;
    MonoNs revoke_returned = 0;
    const Outcome o = revoke_dispatched(
        ex, "held-journal", [&] { lock = std::make_unique<JournalWriteLock>(journal); },
        [&] {
          // revoke() has returned: the kill is sent. Now let the entry in.
          revoke_returned = sys::mono_now_ns();
          lock->release();
        });
    INFO(std::string(outcome_name(o.kind)), ": ", o.reason);
    CHECK(o.kind == OutcomeKind::revoked);
    REQUIRE(o.timings.kill != 0);
    test::report("revocation, journal held", "revoke() to kill", sys::ns_to_ms(o.timings.kill - o.timings.revoke),
                 "ms");
    CHECK(o.timings.kill - o.timings.revoke >= kRevokeJournalBound);
    CHECK_MESSAGE(o.timings.kill - o.timings.revoke <= kRevokeJournalBound + kSlack,
                  "the kill waited for the journal past REVOKE_JOURNAL_BOUND");
    CHECK(o.timings.kill <= revoke_returned);
    CHECK(o.revoke_unjournalled);
    CHECK(o.reason.find("not journalled") != std::string::npos);
    const auto steps = steps_of(journal, "held-journal");
    CHECK_MESSAGE(index_of(steps, "revoke_requested") >= 0, "the late revocation entry was lost");
    CHECK_MESSAGE(index_of(steps, "revoke_requested") < index_of(steps, "finished"),
                  "the late revocation entry came after finished");
  }

  TEST_CASE("J1 J5: authority's refusal is journalled as a revocation by authority before the kill it causes") {
    test::TempDir dir;
    const std::string journal = dir.path() + "/journal.sqlite";
    Executor ex(options(dir.path(), false, journal));
    DeliveryRequest r;
    r.id = "refunded";
    r.repo = "check-then-wedge";  // asks authority at "upload", then blocks
    r.remote = "https://127.0.0.1:9/refunded.git";
    r.ref = "refs/heads/main";
    r.oid = std::string(40, 'c');
    r.budget = std::chrono::milliseconds(30'000);
    r.authority = [](const std::string&) { return AuthorityAnswer{false, "the order was refunded"}; };
    const Outcome o = ex.submit(r).wait();
    INFO(std::string(outcome_name(o.kind)), ": ", o.reason);
    CHECK(o.kind == OutcomeKind::revoked);
    CHECK(o.revoked_by == RevokeCause::authority);
    CHECK(o.revoke_cause.find("the order was refunded") != std::string::npos);
    const auto steps = steps_of(journal, "refunded");
    const auto at = index_of(steps, "revoke_requested");
    CHECK_MESSAGE(at >= 0, "authority's revocation left no trace in the journal");
    CHECK(at < index_of(steps, "finished"));
    auto j = journal::open_sqlite(journal);
    REQUIRE(j.has_value());
    auto rec = (*j)->find("refunded");
    REQUIRE((rec && *rec));
    const auto entry = (*rec)->last(journal::Step::revoke_requested);
    REQUIRE(entry.has_value());
    CHECK(journal::detail_text(entry->detail, "cause") == "authority");
    CHECK(journal::detail_flag(entry->detail, "claimed") == std::optional<bool>(true));
    if (!o.revoke_unjournalled) {
      CHECK_MESSAGE(o.timings.revoke_journalled <= o.timings.kill,
                    "the kill came before authority's revocation was durable");
    }
  }
}

}  // namespace integration_seams
