// host_calls.hpp — runs host callbacks (minter, authority) off the drive
// loop, one at a time, on a worker thread of their own.
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
#include <thread>

#include "sys/events.hpp"

namespace courier::supervisor {

struct HostRequest {
  enum class Kind { mint, check } kind;
  std::function<void(struct HostAnswer&)> work;  // fills the answer; host code runs here
};

struct HostAnswer {
  HostRequest::Kind kind = HostRequest::Kind::check;
  std::string key;                   // leg (mint) or phase (check)
  std::optional<std::string> header; // mint: the token header
  std::string refusal;               // mint refused / check denied: why
  bool ok = false;                   // check: authority holds; mint: header present
  bool revoked_after = false;        // A3: authority revoked while minting
  bool foreign = false;              // mint: the child asked for a foreign destination
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

  // Worker threads still alive in this process (one may be parked in host
  // code after its delivery ended). wait_idle blocks until there are none or
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

}  // namespace courier::supervisor
