// journal_outbox.cpp — entries written again, in order, until the journal
// takes them.
#include "seat/journal_outbox.hpp"

#include <algorithm>
#include <chrono>

namespace courier::seat {

namespace {

// A journal that is away is tried again after this, doubling up to the
// longest wait: a restart of the database is seconds, a cut may be longer.
constexpr std::chrono::milliseconds kFirstRetry{200};
constexpr std::chrono::milliseconds kLongestRetry{5'000};
// The last try at destruction is bounded like any write.
constexpr std::chrono::milliseconds kLastTry{journal::kLockWaitMs};

}  // namespace

JournalOutbox::JournalOutbox(std::shared_ptr<journal::Journal> journal, std::function<void(const std::string&)> log)
    : journal_(std::move(journal)), log_(std::move(log)) {
  thread_ = std::thread([this] { run(); });
}

JournalOutbox::~JournalOutbox() {
  {
    sys::MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  const auto until = std::chrono::steady_clock::now() + kLastTry;
  while (size() > 0 && std::chrono::steady_clock::now() < until) {
    if (!flush_once()) break;
  }
  sys::MutexLock lock(mu_);
  for (const auto& w : waiting_) {
    log_("journal: the " + std::string(journal::step_name(w.entry.step)) + " entry of delivery " + w.id +
         " could not be written before this process stopped; recovery finishes the delivery conservatively");
  }
}

bool JournalOutbox::has(const std::string& id) const {
  sys::MutexLock lock(mu_);
  return std::any_of(waiting_.begin(), waiting_.end(), [&](const Waiting& w) { return w.id == id; });
}

void JournalOutbox::add(const std::string& id, const journal::Entry& e) {
  {
    sys::MutexLock lock(mu_);
    waiting_.push_back(Waiting{id, e});
  }
  cv_.notify_all();
}

std::size_t JournalOutbox::size() const {
  sys::MutexLock lock(mu_);
  return waiting_.size();
}

bool JournalOutbox::wait_empty(sys::MonoNs until) const {
  sys::MutexLock lock(mu_);
  while (!waiting_.empty()) {
    if (!cv_.wait_until(lock, until)) return waiting_.empty();
  }
  return true;
}

bool JournalOutbox::flush_once() {
  for (;;) {
    Waiting w;
    {
      sys::MutexLock lock(mu_);
      if (waiting_.empty()) {
        cv_.notify_all();
        return true;
      }
      w = waiting_.front();
    }
    auto r = journal_->append(w.id, w.entry, true);
    if (!r && r.error().code != Errc::journal_conflict) return false;
    if (!r) {
      log_("journal: the " + std::string(journal::step_name(w.entry.step)) + " entry of delivery " + w.id +
           " was refused when written again (" + r.error().message + "); dropped");
    }
    sys::MutexLock lock(mu_);
    if (!waiting_.empty() && waiting_.front().id == w.id && waiting_.front().entry.step == w.entry.step) {
      waiting_.pop_front();
    }
  }
}

void JournalOutbox::run() {
  auto wait = kFirstRetry;
  for (;;) {
    {
      sys::MutexLock lock(mu_);
      while (!stopping_ && waiting_.empty()) cv_.wait(lock);
      if (stopping_) return;
    }
    if (flush_once()) {
      wait = kFirstRetry;
      continue;
    }
    // Away: try again later (or at once when stopping).
    {
      const sys::MonoNs until = sys::mono_now_ns() + std::chrono::nanoseconds(wait).count();
      sys::MutexLock lock(mu_);
      while (!stopping_ && cv_.wait_until(lock, until)) {
      }
    }
    wait = std::min(wait * 2, kLongestRetry);
  }
}

}  // namespace courier::seat
