// journal_outbox.hpp — journal entries that could not be written yet, kept
// in order and written again until the journal takes them.
//
// A journal on a database server can be away for a while (a restart, a
// network cut) while this process goes on: kills never wait for the
// journal (J1), so a revocation's or an outcome's entry may find it away.
// Dropping such an entry would leave the delivery unfinished in the journal
// for as long as this (live) process runs, since recovery never touches a
// live process's deliveries (J3). So a failed entry is kept here and
// written again later, in order: an entry of a delivery that already has
// one waiting goes behind it, never ahead. An entry the journal refuses for
// good (journal_conflict: recovery finished the row meanwhile) is dropped
// and logged. What is still here when the outbox is destroyed is logged as
// lost after one last bounded try.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "sys/mutex.hpp"
#include "journal/journal.hpp"
#include "sys/clock.hpp"

namespace courier::seat {

class JournalOutbox {
 public:
  JournalOutbox(std::shared_ptr<journal::Journal> journal, std::function<void(const std::string&)> log);
  ~JournalOutbox();
  JournalOutbox(const JournalOutbox&) = delete;
  JournalOutbox& operator=(const JournalOutbox&) = delete;

  // Whether an entry of this delivery is waiting (a new one must queue).
  bool has(const std::string& id) const;
  // Keeps the entry, behind any of the same delivery, and wakes the writer.
  void add(const std::string& id, const journal::Entry& e);
  // How many entries wait.
  std::size_t size() const;
  // Waits until nothing waits, or `until`. True when empty.
  bool wait_empty(sys::MonoNs until) const;

 private:
  struct Waiting {
    std::string id;
    journal::Entry entry;
  };
  void run();
  // Writes what it can, oldest first. False when the journal is still away.
  bool flush_once();

  std::shared_ptr<journal::Journal> journal_;
  std::function<void(const std::string&)> log_;
  mutable sys::Mutex mu_;
  mutable sys::CondVar cv_;
  std::deque<Waiting> waiting_ COURIER_GUARDED_BY(mu_);
  bool stopping_ COURIER_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace courier::seat
