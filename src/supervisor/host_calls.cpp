// host_calls.cpp — the host-callback worker.
#include "supervisor/host_calls.hpp"

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

}  // namespace courier::supervisor
