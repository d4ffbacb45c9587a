// stress.cpp — one delivery, one lifecycle, under load: thousands of
// overlapping submissions and revocations against warm children (the
// stand-in of fixtures/standin.cpp), checked against records the product
// does not keep itself — a pid journal the children append to once they
// have read a job, and a per-lane witness file each child flocks without
// waiting (two children on one lane at once make that flock fail, loudly).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "courier/courier.hpp"
#include "support.hpp"
#include "sys/clock.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_stress {

using namespace courier;

namespace {

constexpr int kPairs = 5'000;
constexpr int kThreads = 4;
constexpr int kLanes = 4;
constexpr std::size_t kInFlightPerThread = 4;
constexpr double kBoundSeconds = 60.0;

// The delivery's events as they come, so a revocation can be made after a
// chosen number of them (never after a sleep).
struct Track {
  std::mutex mu;
  std::condition_variable cv;
  int events = 0;
  bool finished = false;

  void on_event(const DeliveryEvent& e) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ++events;
      if (e.kind == DeliveryEvent::Kind::finished) finished = true;
    }
    cv.notify_all();
  }
  // Until `n` events were seen, or the delivery finished.
  void await(int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return events >= n || finished; });
  }
};

struct Pair {
  DeliveryHandle handle;
  std::shared_ptr<Track> track;
  RevokeAnswer answer = RevokeAnswer::too_late;
  bool revoked_first = false;  // revoke() answered cancelled or stopping
};

struct Tally {
  std::mutex mu;
  std::map<std::string, int> kinds;
  std::map<RevokeAnswer, int> answers;
  std::set<std::int64_t> dispatched_pids;
  int warm = 0;                  // outcomes of deliveries a warm child ran
  int revoked_delivered = 0;     // a revoked delivery that ended delivered (must stay 0)
  int cancelled_dispatched = 0;  // answered cancelled, yet a child ran (must stay 0)
  std::string first_violation;

  void add(Pair& p, const Outcome& o) {
    std::lock_guard<std::mutex> lock(mu);
    ++kinds[outcome_name(o.kind)];
    ++answers[p.answer];
    if (o.dispatched && o.child.pid > 0) dispatched_pids.insert(o.child.pid);
    warm += o.warm;
    const bool bad_delivered = p.revoked_first && o.kind == OutcomeKind::delivered;
    const bool bad_cancel = p.answer == RevokeAnswer::cancelled && o.dispatched;
    revoked_delivered += bad_delivered;
    cancelled_dispatched += bad_cancel;
    if ((bad_delivered || bad_cancel) && first_violation.empty()) {
      first_violation = "delivery " + std::to_string(p.handle.id()) + " answered " +
                        std::to_string(static_cast<int>(p.answer)) + " ended " + outcome_name(o.kind) + ": " + o.reason;
    }
  }
};

// One submit/revoke pair: the revocation immediately, after 1–3 events, after
// a few yields, or after the outcome; its words empty half the time.
Pair submit_and_revoke(Executor& ex, const std::string& scenario, std::mt19937& rng) {
  Pair p;
  p.track = std::make_shared<Track>();
  DeliveryRequest r;
  r.repo = scenario;
  r.remote = "https://127.0.0.1:9/lane-" + std::to_string(rng() % kLanes) + ".git";
  r.ref = "refs/heads/main";
  r.oid = std::string(40, 'a');
  r.budget = std::chrono::milliseconds(30'000);
  r.on_event = [t = p.track](const DeliveryEvent& e) { t->on_event(e); };
  p.handle = ex.submit(std::move(r));
  const std::string reason = rng() % 2 ? std::string() : "stress " + std::to_string(p.handle.id());
  switch (rng() % 4) {
    case 0:
      break;
    case 1:
      p.track->await(1 + static_cast<int>(rng() % 3));
      break;
    case 2:
      for (auto i = rng() % 2'000; i > 0; --i) std::this_thread::yield();
      break;
    default:
      p.track->await(1 << 30);  // finished
      break;
  }
  p.answer = p.handle.revoke(reason);
  p.revoked_first = p.answer == RevokeAnswer::cancelled || p.answer == RevokeAnswer::stopping;
  return p;
}

std::vector<std::int64_t> journal_pids(const std::string& path) {
  std::vector<std::int64_t> pids;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) pids.push_back(std::stoll(line));
  }
  return pids;
}

}  // namespace

TEST_SUITE("stress") {
  TEST_CASE(
      "S1 S5 J5: 5,000 overlapping submit/revoke pairs on warm children: no revoked delivery ends delivered, every "
      "child that read a job belongs to a dispatched delivery, and no two children ever work one lane at once") {
    test::TempDir tmp;
    const std::string journal = tmp.path() + "/pids";
    const std::string scenario = "witness@" + journal;
    std::atomic<int> witness_failures{0};
    ExecutorOptions eo;
    eo.lane_dir = tmp.path() + "/lanes";
    eo.workers = 2;
    eo.warm_children = 2;
    eo.child_program = COURIER_STANDIN;
    eo.on_log = [](std::string_view) {};
    eo.on_child_stderr = [&](std::string_view text) {
      if (text.find("WITNESS FAILED") != std::string_view::npos) witness_failures.fetch_add(1);
    };
    Tally tally;
    const sys::MonoNs start = sys::mono_now_ns();
    {
      Executor ex(eo);
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
          std::mt19937 rng(static_cast<unsigned>(0x5eed + t));
          std::deque<Pair> in_flight;
          auto settle = [&] {
            Pair& p = in_flight.front();
            tally.add(p, p.handle.wait());
            in_flight.pop_front();
          };
          for (int i = t; i < kPairs; i += kThreads) {
            in_flight.push_back(submit_and_revoke(ex, scenario, rng));
            if (in_flight.size() > kInFlightPerThread) settle();
          }
          while (!in_flight.empty()) settle();
        });
      }
      for (auto& th : threads) th.join();
    }
    const double seconds = static_cast<double>(sys::mono_now_ns() - start) / 1e9;
    const auto pids = journal_pids(journal);
    std::vector<std::int64_t> strangers;
    for (auto pid : pids) {
      if (!tally.dispatched_pids.count(pid)) strangers.push_back(pid);
    }
    int total = 0;
    for (const auto& [kind, n] : tally.kinds) {
      total += n;
      test::report("stress", std::string("outcome ") + kind, n, "deliveries");
    }
    const char* answer_names[] = {"cancelled", "stopping", "too_late", "repeated"};
    for (const auto& [answer, n] : tally.answers) {
      test::report("stress", std::string("revoke answered ") + answer_names[static_cast<int>(answer)], n, "pairs");
    }
    test::report("stress", "children that read a job (pid journal)", static_cast<double>(pids.size()), "children");
    test::report("stress", "dispatched deliveries", static_cast<double>(tally.dispatched_pids.size()), "deliveries");
    test::report("stress", "deliveries a warm child ran", tally.warm, "deliveries");
    test::report("stress", "duration", seconds, "s");
    INFO(tally.first_violation);
    CHECK(total == kPairs);
    CHECK(tally.revoked_delivered == 0);
    CHECK(tally.cancelled_dispatched == 0);
    CHECK(strangers.empty());
    CHECK(witness_failures.load() == 0);
    CHECK(tally.kinds.count("protocol_fault") == 0);  // a witness failure ends so (exit code, no result)
    CHECK(!pids.empty());
    CHECK(tally.answers[RevokeAnswer::stopping] > 0);  // the window after the claim was reached
    CHECK(tally.kinds["delivered"] > 0);
    CHECK(tally.warm > 0);  // the warm path was taken, not only cold children
    CHECK(seconds <= kBoundSeconds);
  }
}

}  // namespace integration_stress
