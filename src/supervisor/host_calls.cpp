// host_calls.cpp — the host-callback workers: HostCalls (minter,
// authority) and HostNotifier (the host's observers).
#include "supervisor/host_calls.hpp"

#include <chrono>
#include <system_error>

#include "sys/clock.hpp"

namespace courier::supervisor {

namespace {
std::mutex g_live_mu;
std::condition_variable g_live_cv;
std::size_t g_live = 0;

// Counts a worker from creation until its thread has dropped everything it held.
struct LiveWorker {
  LiveWorker() {
    std::lock_guard<std::mutex> lock(g_live_mu);
    ++g_live;
  }
  ~LiveWorker() {
    std::lock_guard<std::mutex> lock(g_live_mu);
    --g_live;
    g_live_cv.notify_all();
  }
};
}  // namespace

std::size_t HostCalls::live_workers() {
  std::lock_guard<std::mutex> lock(g_live_mu);
  return g_live;
}

bool HostCalls::wait_idle(std::int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(g_live_mu);
  return g_live_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [] { return g_live == 0; });
}

HostCalls::HostCalls(std::shared_ptr<sys::EventFd> wake) : shared_(std::make_shared<Shared>()) {
  shared_->wake = std::move(wake);
}

HostCalls::~HostCalls() {
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->closed = true;
    shared_->queue.clear();
  }
  shared_->cv.notify_all();
  if (thread_.joinable()) thread_.detach();
}

bool HostCalls::submit(HostRequest::Kind kind, std::string key, std::function<void(HostAnswer&)> work) {
  std::lock_guard<std::mutex> lock(shared_->mu);
  if (shared_->queue.size() + shared_->in_flight >= kMaxPending) return false;
  HostAnswer a;
  a.kind = kind;
  a.key = std::move(key);
  shared_->queue.emplace_back(std::move(a), std::move(work));
  if (!thread_.joinable()) {
    thread_ = std::thread([s = shared_, live = std::make_shared<LiveWorker>()]() mutable {
      worker(std::move(s));
      live.reset();
    });
  }
  shared_->cv.notify_one();
  return true;
}

std::deque<HostAnswer> HostCalls::take_answers() {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return std::exchange(shared_->answers, {});
}

std::size_t HostCalls::pending() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return shared_->queue.size() + shared_->in_flight;
}

void HostCalls::worker(std::shared_ptr<Shared> shared) {
  // Holds the shared state only while running; released before the thread
  // counts itself gone.
  std::shared_ptr<Shared> s = std::move(shared);
  std::unique_lock<std::mutex> lock(s->mu);
  for (;;) {
    s->cv.wait(lock, [&] { return s->closed || !s->queue.empty(); });
    if (s->closed) return;
    auto [answer, work] = std::move(s->queue.front());
    s->queue.pop_front();
    ++s->in_flight;
    lock.unlock();
    work(answer);  // host code
    lock.lock();
    --s->in_flight;
    if (s->closed) return;
    s->answers.push_back(std::move(answer));
    s->wake->signal();
  }
}

// ---- HostNotifier ----------------------------------------------------------

HostNotifier::HostNotifier() : s_(std::make_shared<Shared>()) {}

HostNotifier::~HostNotifier() {
  std::deque<Entry> leftover;
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->closed = true;
    leftover.swap(s_->queue);  // host closures are destroyed outside the lock
    s_->text_bytes = 0;
  }
  s_->idle.notify_all();
}

bool HostNotifier::post(std::function<void()> call, std::uint64_t coalesce_key) {
  Entry e;
  e.key = coalesce_key;
  e.call = std::move(call);
  return enqueue(std::move(e));
}

bool HostNotifier::post_text(std::uint64_t key, std::function<void(std::string_view)> sink, std::string_view text) {
  Entry e;
  e.key = key;
  e.sink = std::move(sink);
  e.text.assign(text);
  return enqueue(std::move(e));
}

bool HostNotifier::enqueue(Entry e) {
  Entry replaced;  // a coalesced call, destroyed after the lock is released
  std::lock_guard<std::mutex> lock(s_->mu);
  if (s_->closed) return false;
  if (e.sink) {
    if (s_->text_bytes + e.text.size() > kMaxQueuedText) {
      ++s_->dropped;
      return false;
    }
    if (!s_->queue.empty() && s_->queue.back().sink && s_->queue.back().key == e.key) {
      s_->queue.back().text += e.text;
      s_->text_bytes += e.text.size();
      return true;
    }
  } else if (e.key != 0) {
    for (auto& waiting : s_->queue) {
      if (!waiting.sink && waiting.key == e.key) {
        replaced.call = std::exchange(waiting.call, std::move(e.call));
        return true;
      }
    }
  }
  if (s_->queue.size() >= kMaxQueued) {
    ++s_->dropped;
    return false;
  }
  s_->text_bytes += e.text.size();
  s_->queue.push_back(std::move(e));
  if (!s_->busy) {
    try {
      std::thread([s = s_, live = std::make_shared<LiveWorker>()]() mutable {
        worker(std::move(s));
        live.reset();
      }).detach();
      s_->busy = true;
    } catch (const std::system_error&) {
      // No thread to be had: the entry waits for the next post to try again
      // (a drain gives up at its bound). Host code never runs here.
    }
  }
  return true;
}

void HostNotifier::deliver(Entry& e) {
  if (e.sink) {
    e.sink(e.text);
  } else if (e.call) {
    e.call();
  }
}

void HostNotifier::worker(std::shared_ptr<Shared> shared) {
  std::shared_ptr<Shared> s = std::move(shared);
  std::unique_lock<std::mutex> lock(s->mu);
  while (!s->queue.empty()) {
    {
      Entry e = std::move(s->queue.front());
      s->queue.pop_front();
      s->text_bytes -= e.text.size();
      lock.unlock();
      deliver(e);  // host code
    }
    lock.lock();
  }
  s->busy = false;
  s->idle.notify_all();
}

bool HostNotifier::drain_until(std::int64_t deadline_ns) {
  std::unique_lock<std::mutex> lock(s_->mu);
  for (;;) {
    if (!s_->busy && s_->queue.empty()) return true;
    const std::int64_t now = sys::mono_now_ns();
    if (now >= deadline_ns) return false;
    s_->idle.wait_for(lock, std::chrono::nanoseconds(deadline_ns - now));
  }
}

std::uint64_t HostNotifier::dropped() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->dropped;
}

}  // namespace courier::supervisor
