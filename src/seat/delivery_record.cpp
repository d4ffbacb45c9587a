// delivery_record.cpp — one delivery's transitions, written to the journal.
#include "seat/delivery_record.hpp"

#include <nlohmann/json.hpp>

namespace courier::seat {

std::string detail_of(const char* field, const std::string& value) {
  return nlohmann::json{{field, value}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void DeliveryRecord::bind(std::shared_ptr<journal::Journal> journal, int attempt,
                          std::shared_ptr<JournalOutbox> outbox) {
  journal_ = std::move(journal);
  outbox_ = std::move(outbox);
  attempt_ = attempt;
}

Result<void> DeliveryRecord::note(journal::Step step, std::string detail, bool durable, bool keep) {
  if (!journal_) return {};
  journal::Entry e{step, attempt_, journal::wall_now_ms(), std::move(detail)};
  Result<void> ok;
  if (outbox_ && outbox_->has(id_)) {
    // An earlier entry of this delivery waits: this one may not pass it.
    ok = fail(Errc::journal_failed, "the journal has not taken this delivery's earlier entries yet");
  } else {
    ok = journal_->append(id_, e, durable);
  }
  if (!ok) {
    {
      sys::MutexLock lock(mu_);
      if (first_error_.empty()) first_error_ = ok.error().message;
    }
    if (outbox_ && keep && ok.error().code != Errc::journal_conflict) outbox_->add(id_, e);
  }
  return ok;
}

void DeliveryRecord::claimed(std::optional<std::int64_t> fence) {
  nlohmann::json detail = nlohmann::json::object();
  if (fence) detail["fence"] = *fence;  // L3: the lease this turn ran under
  (void)note(journal::Step::claimed, detail.dump(), false);
}

void DeliveryRecord::dispatched(std::int64_t pid) {
  if (!journal_) return;
  nlohmann::json detail{{"child_pid", std::to_string(pid)}};
  if (auto who = journal::identify(pid)) {
    detail["child_start_ticks"] = std::to_string(who->start_ticks);
    detail["child_boot_id"] = who->boot_id;
  }
  (void)note(journal::Step::dispatched, detail.dump(), false);
}

// An entry's old ids: "old_oids" {ref: id} for every ref, and "old_oid",
// the one ref's id, for a delivery of one ref (what readers of one ref ask).
nlohmann::json old_oids_json(const OldOids& old_oids) {
  nlohmann::json detail{{"old_oids", old_oids}};
  if (old_oids.size() == 1) detail["old_oid"] = old_oids.begin()->second;
  return detail;
}

std::string old_oids_detail(const OldOids& old_oids) {
  return old_oids_json(old_oids).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void DeliveryRecord::advertised(const OldOids& old_oids) {
  if (!journal_ || old_oids.empty()) return;
  sys::MutexLock lock(advertised_mu_);
  if (advertised_) return;
  advertised_ = true;
  advertised_oids_ = old_oids;
  (void)note(journal::Step::advertised, old_oids_detail(old_oids), false);
}

Result<void> DeliveryRecord::post_started(const OldOids& old_oids, const std::vector<std::string>& sent) {
  advertised(old_oids);
  // Every ref's old id (J4): the sent refs' as their commands carry them,
  // the others' as the advertisement named them.
  OldOids every = old_oids;
  {
    sys::MutexLock lock(advertised_mu_);
    every.insert(advertised_oids_.begin(), advertised_oids_.end());
  }
  nlohmann::json detail = old_oids_json(every);
  detail["sent"] = sent;
  return note(journal::Step::post_started, detail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), true,
              false);
}

Result<void> DeliveryRecord::revoke_requested(const std::string& reason, RevokeCause cause, bool claimed) {
  const nlohmann::json detail{{"cause", revoke_cause_name(cause)}, {"reason", reason}, {"claimed", claimed}};
  return note(journal::Step::revoke_requested, detail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
              true);
}

void DeliveryRecord::finish(Outcome& o) {
  o.delivery_id = id_;
  o.attempt = attempt_;
  if (!journal_) return;
  OldOids old_oids;
  for (const RefOutcome& r : o.refs) {
    if (r.old_oid) old_oids.emplace(r.ref, *r.old_oid);
  }
  advertised(old_oids);
  // A report was read for at least one ref (mixed: for some of them).
  if (o.remote_effect == RemoteEffect::applied || o.remote_effect == RemoteEffect::refused ||
      o.remote_effect == RemoteEffect::mixed) {
    (void)note(journal::Step::answered, detail_of("remote_effect", remote_effect_name(o.remote_effect)), false);
  }
  {
    sys::MutexLock lock(mu_);
    if (!first_error_.empty() && o.journal_error.empty()) o.journal_error = first_error_;
  }
  if (auto ok = note(journal::Step::finished, journal::outcome_detail(o), false); !ok) {
    o.journal_error = ok.error().message;
  }
}

}  // namespace courier::seat
