// host_calls.hpp — runs host callbacks off the drive loop: the minter and
// authority (HostCalls, whose answers come back to the loop) and the host's
// observers (HostNotifier, which answer nothing), each on a worker thread of
// their own.
//
// Why: a minter or an authority check is host code and may block for any
// time. The drive loop must keep draining pipes, reaping and honouring the
// deadline meanwhile, so it never calls them itself. Answers come back
// through a queue and a wake-up on the loop's eventfd. A call that never
// returns strands only this worker: it is detached when the delivery ends,
// and its late answer goes nowhere.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "sys/events.hpp"

namespace courier::supervisor {

struct HostRequest {
  enum class Kind { mint, check } kind;
  std::function<void(struct HostAnswer&)> work;  // fills the answer; host code runs here
};

struct HostAnswer {
  HostRequest::Kind kind = HostRequest::Kind::check;
  std::string key;                    // leg (mint) or phase (check)
  std::optional<std::string> header;  // mint: the token header
  std::string refusal;                // mint refused / check denied: why
  bool ok = false;                    // check: authority holds; mint: header present
  bool revoked_after = false;         // A3: authority revoked while minting
  bool foreign = false;               // mint: the child asked for a foreign destination
  std::string not_durable;            // check at kCheckPost: post_started could not be journalled (why)
  std::string revoke_words;           // the answer revokes (authority said no): the revocation's words
};

class HostCalls {
 public:
  explicit HostCalls(std::shared_ptr<sys::EventFd> wake);
  // Detaches the worker (it may be parked in host code forever).
  ~HostCalls();

  // Queues one call; false if `kMaxPending` are already waiting.
  bool submit(HostRequest::Kind kind, std::string key, std::function<void(HostAnswer&)> work);
  // Answers that are ready, in order.
  std::deque<HostAnswer> take_answers();
  std::size_t pending() const;

  static constexpr std::size_t kMaxPending = 16;

  // Worker threads (of HostCalls and of HostNotifier) still alive in this
  // process (one may be parked in host code after its delivery ended). wait_idle blocks until there are none or
  // the timeout passes; true when none are left.
  static std::size_t live_workers();
  static bool wait_idle(std::int64_t timeout_ms);

 private:
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::pair<HostAnswer, std::function<void(HostAnswer&)>>> queue;
    std::deque<HostAnswer> answers;
    bool closed = false;
    std::size_t in_flight = 0;
    std::shared_ptr<sys::EventFd> wake;
  };
  static void worker(std::shared_ptr<Shared> s);

  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

// HostNotifier — the host's observers (progress, the child's stderr, the
// supervisor's log lines, the dispatched event) called off the drive loop,
// in the order they were posted, on a thread of their own.
//
// Why: an observer is host code and may block for any time (a terminal that
// does not drain, a lock the host holds elsewhere). Run on the drive loop,
// it would leave a killed child unreaped and the seat held (D2, S4). post()
// never blocks and never waits for host code: the queue is bounded
// (kMaxQueued calls, kMaxQueuedText bytes of text), a progress update
// replaces one of the same key still waiting (coalesced), text for one key
// is appended to the newest waiting entry when it is that key's, and what
// does not fit is dropped and counted. The worker exists only while there is
// something to deliver; one parked in host code forever strands only itself.
class HostNotifier {
 public:
  HostNotifier();
  // Drops what is still queued. A worker parked in host code is left to
  // return on its own (it then finds nothing more to do).
  ~HostNotifier();
  HostNotifier(const HostNotifier&) = delete;
  HostNotifier& operator=(const HostNotifier&) = delete;

  // Queues one call. coalesce_key != 0: a waiting call with the same key is
  // replaced (its turn in the order is kept). False when dropped (full).
  bool post(std::function<void()> call, std::uint64_t coalesce_key = 0);
  // Queues text for `sink`, appended to the newest waiting entry when that
  // one is text for the same key. False when dropped (full).
  bool post_text(std::uint64_t key, std::function<void(std::string_view)> sink, std::string_view text);
  // Waits until everything posted so far has been delivered, or `deadline`
  // (CLOCK_MONOTONIC ns) passes. True when delivered.
  bool drain_until(std::int64_t deadline_ns);
  // Calls and text entries dropped because the queue was full.
  std::uint64_t dropped() const;

  static constexpr std::size_t kMaxQueued = 256;
  static constexpr std::size_t kMaxQueuedText = 256 * 1024;

 private:
  struct Entry {
    std::uint64_t key = 0;
    std::function<void()> call;
    std::function<void(std::string_view)> sink;  // text entries
    std::string text;
  };
  struct Shared {
    std::mutex mu;
    std::condition_variable idle;
    std::deque<Entry> queue;
    std::size_t text_bytes = 0;
    bool busy = false;  // a worker exists (running a call or about to)
    bool closed = false;
    std::uint64_t dropped = 0;
  };
  bool enqueue(Entry e);
  static void deliver(Entry& e);
  static void worker(std::shared_ptr<Shared> s);

  std::shared_ptr<Shared> s_;
};

}  // namespace courier::supervisor
