// delivery_record.hpp — one delivery's writes to the journal (J1, J2): its id
// and attempt, each transition as it happens, and its end. A delivery that
// was not admitted to a journal has a record that writes nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sys/mutex.hpp"
#include "courier/outcome.hpp"
#include "journal/journal.hpp"
#include "seat/journal_outbox.hpp"

namespace courier::seat {

// Every ref's old id, by ref (the child's protocol::OldOids).
using OldOids = std::map<std::string, std::string>;

class DeliveryRecord {
 public:
  // The delivery's id, before admission decides whether it is journalled.
  void set_id(std::string id) { id_ = std::move(id); }
  // Admitted: this attempt's transitions go to `journal` from here; an
  // entry the journal cannot take now goes to `outbox` (when given) to be
  // written later, in order.
  void bind(std::shared_ptr<journal::Journal> journal, int attempt, std::shared_ptr<JournalOutbox> outbox = nullptr);
  void set_attempt(int attempt) { attempt_ = attempt; }

  const std::string& id() const { return id_; }
  int attempt() const { return attempt_; }
  bool journalled() const { return static_cast<bool>(journal_); }

  // One transition of this attempt. A failure is remembered for the outcome
  // (journal_error) and returned; no caller lets it stop a kill. With an
  // outbox and `keep`, the entry is written later (behind any entry of
  // this delivery still waiting there, so never out of order). J1's
  // post_started is never kept: a POST it did not precede did not happen.
  Result<void> note(journal::Step step, std::string detail, bool durable, bool keep = true);

  // The turn claimed its seat; `fence`: the lane lease's fence it runs
  // under (L3), recorded as the entry's "fence".
  void claimed(std::optional<std::int64_t> fence = std::nullopt);
  // The child exists: its pid, start time and boot id (J3).
  void dispatched(std::int64_t pid);
  // J1: durable before the child hears it may begin the POST, with every
  // ref's old id, which the journal keeps for a compare-and-swap
  // re-delivery (J4).
  // Detail {"old_oids": {ref: id}, "sent": [the refs whose commands go in
  // the POST], "old_oid": the id when there is one ref}.
  Result<void> post_started(const OldOids& old_oids, const std::vector<std::string>& sent);
  // Every ref's old id as the remote advertised it (J4), once: from the
  // child's advertise frame, else at the write-ahead of the POST, else at
  // the end. Written before post_started whichever thread comes first.
  void advertised(const OldOids& old_oids);
  // The revocation: its cause, its words (durable). `claimed`: a child may
  // exist. Detail {"cause": revoke_cause_name, "reason", "claimed"}.
  Result<void> revoke_requested(const std::string& reason, RevokeCause cause, bool claimed);

  // The end of this attempt: what was still unjournalled of the old id and
  // the report, then the outcome, which also gets the id and attempt. A
  // failure flags the outcome (journal_error); it stands all the same, and
  // recovery finishes the row conservatively later.
  void finish(Outcome& o);

 private:
  std::shared_ptr<journal::Journal> journal_;
  std::shared_ptr<JournalOutbox> outbox_;
  std::string id_;
  int attempt_ = 1;
  sys::Mutex advertised_mu_;  // held while the entry is written: post_started waits for it
  bool advertised_ COURIER_GUARDED_BY(advertised_mu_) = false;
  OldOids advertised_oids_ COURIER_GUARDED_BY(advertised_mu_);  // what the advertised entry named
  sys::Mutex mu_;
  std::string first_error_ COURIER_GUARDED_BY(mu_);
};

// A one-field JSON object (the value may come from the child: escaped).
std::string detail_of(const char* field, const std::string& value);

}  // namespace courier::seat
