// deliveries.cpp — the registry of the service's deliveries.
#include "service/deliveries.hpp"

#include <algorithm>
#include <functional>

#include "seat/admission.hpp"
#include "seat/lane_table.hpp"
#include "report/event_json.hpp"
#include "report/outcome_json.hpp"
#include "service/event_log.hpp"
#include "service/event_numbering.hpp"
#include "service/resume.hpp"
#include "service/service_log.hpp"
#include "sys/clock.hpp"

namespace courier::service {

struct Delivery::Impl {
  std::string id;
  report::OutcomeFacts facts;
  mutable std::mutex mu;
  DeliveryHandle handle;  // set once, right after submit()
  bool has_handle = false;
  bool finish_seen = false;  // the finished event came (maybe before the handle)
  bool ended = false;        // the finished line is in `log`
  std::optional<Outcome> outcome;
  int attempt = 1;
  EventLog log;               // its lines, numbered (guarded by mu)
  bool revoke_asked = false;  // a revocation was asked while live (state `stopping`)
  bool revoke_line = false;   // its revoke_requested line is in `log`
  bool waiting = true;        // counted as queued (not yet granted a seat)
  std::string revoke_cause;   // a revocation that came before the handle
  RevokeCause revoke_by = RevokeCause::caller;
  bool withdraw_only = false;  // that revocation is a drain's withdrawal (live work goes on)
  std::unique_ptr<auth::AuthSetup> auth;
};

namespace {

class DeliveryStream final : public EventStream {
 public:
  DeliveryStream(std::shared_ptr<Delivery::Impl> d, std::uint64_t after) : d_(std::move(d)), seq_(after) {}
  Chunk next() override {
    std::lock_guard<std::mutex> lock(d_->mu);
    Chunk c;
    c.text = d_->log.take_after(seq_);
    c.end = c.text.empty() && d_->ended;
    return c;
  }
  bool wait(const std::function<void()>& park, std::function<void()> wake) override {
    std::lock_guard<std::mutex> lock(d_->mu);
    if (d_->log.has_after(seq_) || d_->ended) return false;
    park();
    d_->log.on_next(std::move(wake));
    return true;
  }

 private:
  std::shared_ptr<Delivery::Impl> d_;
  std::uint64_t seq_;
};

// The revoke_requested line of the journal's entry `e` (its cause), once.
void push_revoke_line_locked(Delivery::Impl& d, const journal::Entry& e, std::uint64_t k) {
  if (d.revoke_line || d.ended) return;
  d.revoke_line = true;
  d.log.transition(report::revoke_requested_event(journal::detail_text(e.detail, "cause")), k);
}

// A repository git refuses for its owner is set aside by the credential
// helper's run, and the log says so (docs/auth.md).
std::function<void(const std::string&)> credential_note(const std::string& id) {
  return [id](const std::string& message) {
    log_event(LogLevel::warn, "credential_config", {{"delivery", id}, {"message", message}});
  };
}

}  // namespace

std::string Delivery::state() const {
  std::lock_guard<std::mutex> lock(impl->mu);
  DeliveryState s = DeliveryState::finished;
  if (!impl->ended) {
    s = impl->has_handle ? impl->handle.state() : DeliveryState::queued;
    if (s == DeliveryState::finished) s = DeliveryState::running;  // finished once its line is there
    // Revoked while running: the library says so too once its revocation
    // acts; this is true from the moment the DELETE was taken.
    if (s == DeliveryState::running && impl->revoke_asked) s = DeliveryState::stopping;
  }
  return std::string(enum_word(s));
}

int Delivery::attempt() const {
  std::lock_guard<std::mutex> lock(impl->mu);
  return impl->attempt;
}

std::optional<Outcome> Delivery::outcome() const {
  std::lock_guard<std::mutex> lock(impl->mu);
  return impl->ended ? impl->outcome : std::nullopt;
}

bool Delivery::same_body(const std::string& repo_, const std::string& remote_, const std::string& ref_,
                         const std::string& oid_) const {
  return repo == repo_ && remote == remote_ && ref == ref_ && oid == oid_;
}

Deliveries::Deliveries(RegistryOptions options, std::unique_ptr<journal::Journal> journal, Metrics& metrics)
    : opt_(std::move(options)),
      journal_(std::move(journal)),
      metrics_(metrics),
      gen_(opt_.gen.empty() ? boot_generation() : opt_.gen) {}

Deliveries::~Deliveries() = default;

void Deliveries::attach(Executor* executor) { executor_ = executor; }

std::shared_ptr<Delivery> Deliveries::find(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

std::optional<journal::Record> Deliveries::journalled(const std::string& id) const {
  if (!journal_) return std::nullopt;
  auto r = journal_->find(id);
  if (!r || !*r) return std::nullopt;
  return **r;
}

std::optional<std::uint64_t> Deliveries::ordinal(const std::string& id, journal::Step step) const {
  auto r = journalled(id);
  return r ? entry_ordinal(*r, step) : std::nullopt;
}

// The same id must name the same delivery (J4): checked against what this
// service holds and what the journal knows, before anything is journalled.
std::optional<std::string> Deliveries::conflict(const SubmitInput& in, const std::shared_ptr<Delivery>& known) const {
  auto differs = [&](const std::string& repo, const std::string& remote, const std::string& ref,
                     const std::string& oid) -> std::optional<std::string> {
    const DeliveryRequest& r = in.checked.request();
    for (auto [name, a, b] : {std::tuple{"repo", &repo, &r.repo}, std::tuple{"remote", &remote, &in.checked.remote()},
                              std::tuple{"ref", &ref, &r.ref}, std::tuple{"oid", &oid, &r.oid}}) {
      if (*a != *b) {
        return "delivery id " + in.id + " was submitted for another " + name + " (" + *a + ", not " + *b +
               "): a new delivery needs a new id";
      }
    }
    return std::nullopt;
  };
  if (known) return differs(known->repo, known->remote, known->ref, known->oid);
  if (auto r = journalled(in.id)) {
    const auto& s = r->submission;
    if (auto why = differs(s.repo, s.remote, s.ref, s.oid)) return why;
    // J4 across hosts (and processes): an id another service or process is
    // running now runs there only; this one neither runs it nor waits.
    if (!r->finished) {
      return "delivery id " + in.id + " is in flight " +
             (s.host.empty() ? std::string("in another process") : "on host " + s.host) + " (process " +
             std::to_string(s.submitter.pid) + ", attempt " + std::to_string(s.attempt) + "); follow it there";
    }
  }
  return std::nullopt;
}

SubmitResult Deliveries::submit(const SubmitInput& in) {
  SubmitResult res;
  if (!executor_) {
    res.message = "the service is not running deliveries";
    return res;
  }
  std::shared_ptr<Delivery> known;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (draining_) {
      res.kind = SubmitResult::Kind::draining;
      return res;
    }
    if (!in.id.empty()) {
      auto it = by_id_.find(in.id);
      if (it != by_id_.end()) known = it->second;
    }
  }
  if (!in.id.empty()) {
    if (auto why = conflict(in, known)) {
      res.kind = SubmitResult::Kind::conflict;
      res.message = *why;
      return res;
    }
  }
  auto d = std::make_shared<Delivery>();
  d->impl = std::make_shared<Delivery::Impl>();
  d->id = in.id.empty() ? seat::new_delivery_id() : in.id;
  d->repo = in.checked.request().repo;
  d->remote = in.checked.remote();
  // Several refs: named by the first (its outcome's "refs" has each).
  d->ref = in.checked.updates().front().ref;
  d->oid = in.checked.updates().front().oid;
  d->credential = in.credential;
  d->submitted_unix_ms = journal::wall_now_ms();
  d->impl->id = d->id;
  d->impl->log.set_gen(gen_);
  d->impl->facts = report::OutcomeFacts{d->remote, d->ref, d->oid, std::nullopt};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_id_.find(d->id);
    // The same id again while it is in flight: the delivery this service
    // already has, never a second submission (J4: one push per id).
    if (it != by_id_.end() && !it->second->outcome()) {
      res.kind = SubmitResult::Kind::existing;
      res.delivery = it->second;
      return res;
    }
    if (queued_ >= opt_.max_queued) {
      res.kind = SubmitResult::Kind::queue_full;
      res.retry_after_s =
          static_cast<int>(std::clamp<std::size_t>(queued_ / std::max<std::size_t>(opt_.workers, 1), 1, 60));
      return res;
    }
    by_id_[d->id] = d;
    order_.push_back(d->id);
    live_set_[d->impl.get()] = d->impl;
    ++live_;
    ++queued_;
    forget_old_locked();
  }
  return run(in, std::move(d));
}

// The executor's request for a submission: the delivery, its note for a
// restarted service, the service's trust settings, the event feed.
CheckedRequest Deliveries::request_for(const SubmitInput& in, const std::shared_ptr<Delivery>& d) {
  CheckedRequest checked = in.checked;
  DeliveryRequest& req = checked.request();
  req.id = d->id;
  req.budget = in.deadline;
  req.deadline_unix_ms = in.deadline_unix_ms;
  // What a restarted service needs to submit it again (resume.hpp); the credential by its name only.
  ServiceNote note;
  if (!in.credential.empty()) note.credential = in.credential;
  note.update = req.update;
  note.remote_progress = in.remote_progress;
  if (!req.updates.empty()) note.updates = req.updates;
  note.atomic = req.atomic;
  note.push_options = req.push_options;
  req.journal_note = note_text(note);
  req.ca_file = opt_.ca_file;
  if (in.checked.remote().rfind("ssh://", 0) == 0) req.known_hosts = opt_.known_hosts;  // canonical: ssh:// only
  req.remote_progress = in.remote_progress;
  std::weak_ptr<Delivery::Impl> weak = d->impl;
  req.on_event = [this, weak](const DeliveryEvent& e) { on_event(weak, e); };
  return checked;
}

SubmitResult Deliveries::run(const SubmitInput& in, std::shared_ptr<Delivery> d) {
  SubmitResult res;
  CheckedRequest checked = request_for(in, d);
  DeliveryRequest& req = checked.request();
  if (!in.credential_spec.empty()) {
    // The tokens' deadline is taken before submit(), so it is no later
    // than the turn's.
    const std::int64_t budget_ms = in.deadline_unix_ms ? *in.deadline_unix_ms - journal::wall_now_ms()
                                                       : static_cast<std::int64_t>(in.deadline.count());
    const MonoNs deadline = sys::mono_after_ms(sys::mono_now_ns(), budget_ms);
    auto setup = auth::AuthSetup::from_spec(in.credential_spec, req, deadline, "credential " + in.credential,
                                            credential_note(d->id));
    if (!setup) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        by_id_.erase(d->id);
        live_set_.erase(d->impl.get());
        --live_;
        --queued_;
      }
      log_event(LogLevel::error, "credential_failed", {{"delivery", d->id}, {"message", setup.error().message}});
      res.kind = SubmitResult::Kind::refused;
      res.message = setup.error().message;
      return res;
    }
    req.mint = (*setup)->mint();
    req.mint_binds_payload = (*setup)->binds_payload();
    req.mint_after_challenge = (*setup)->after_challenge();
    d->impl->auth = std::move(*setup);
  }
  // Its `submitted` entry is the next one of its row (the executor writes
  // it before anything else of this attempt).
  const auto known = journalled(d->id);
  const std::uint64_t submitted = journal_ ? (known ? known->entries.size() : 0) + 1 : 0;
  {
    std::lock_guard<std::mutex> lock(d->impl->mu);
    d->impl->log.transition(report::queued_event(), submitted);
  }
  log_event(LogLevel::info, "submitted",
            {{"delivery", d->id},
             {"remote", d->remote},
             {"ref", d->ref},
             {"oid", d->oid},
             {"credential", d->credential.empty() ? nlohmann::json(nullptr) : nlohmann::json(d->credential)}});
  DeliveryHandle handle = executor_->submit(std::move(checked));
  if (auto r = journalled(d->id)) {
    std::lock_guard<std::mutex> lock(d->impl->mu);
    d->impl->attempt = r->submission.attempt;
  }
  std::string late_revoke;
  RevokeCause late_by = RevokeCause::caller;
  bool late_withdraw = false;
  bool complete = false;
  {
    std::lock_guard<std::mutex> lock(d->impl->mu);
    d->impl->handle = std::move(handle);
    d->impl->has_handle = true;
    complete = d->impl->finish_seen;
    late_revoke = d->impl->revoke_cause;
    late_by = d->impl->revoke_by;
    late_withdraw = d->impl->withdraw_only;
  }
  if (complete) finished(*d->impl);
  if (!late_revoke.empty() && late_withdraw) d->impl->handle.withdraw(late_revoke, late_by);
  if (!late_revoke.empty() && !late_withdraw) d->impl->handle.revoke(late_revoke, late_by);
  auto o = d->outcome();
  if (o && o->replayed) {
    // The journal already finished this id: nothing was sent now. The
    // registry keeps what it had (a replay is an answer, not a delivery).
    std::lock_guard<std::mutex> lock(mu_);
    by_id_.erase(d->id);
    order_.erase(std::remove(order_.begin(), order_.end(), d->id), order_.end());
    res.kind = SubmitResult::Kind::replayed;
    res.outcome = *o;
    return res;
  }
  res.kind = SubmitResult::Kind::accepted;
  res.delivery = std::move(d);
  return res;
}

void Deliveries::on_event(const std::weak_ptr<Delivery::Impl>& w, const DeliveryEvent& e) {
  auto d = w.lock();
  if (!d) return;
  if (e.kind == DeliveryEvent::Kind::finished) {
    bool complete = false;
    {
      std::lock_guard<std::mutex> lock(d->mu);
      d->finish_seen = true;
      complete = d->has_handle;
    }
    if (complete) finished(*d);
    return;
  }
  bool left_queue = false;
  // The dispatched entry is written before its event comes (the child's
  // identity, J3): the line is numbered by it.
  const std::uint64_t k =
      e.kind == DeliveryEvent::Kind::dispatched ? ordinal(d->id, journal::Step::dispatched).value_or(0) : 0;
  {
    std::lock_guard<std::mutex> lock(d->mu);
    if (e.kind == DeliveryEvent::Kind::seat_granted && d->waiting) {
      d->waiting = false;
      left_queue = true;
    }
    if (e.kind == DeliveryEvent::Kind::dispatched) {
      d->log.transition(report::event_to_json(e), k);
    } else {
      d->log.push(report::event_to_json(e));
    }
  }
  if (left_queue) {
    std::lock_guard<std::mutex> lock(mu_);
    --queued_;
  }
}

// The outcome is final: its line ends the stream; the counters, metrics and
// the credential helper learn it.
void Deliveries::finished(Delivery::Impl& d) {
  std::optional<Outcome> o = d.handle.wait_for(std::chrono::milliseconds(0));
  if (!o) o = d.handle.wait();
  // Its journal entries are all written by now: a revocation's before its
  // `finished` (the library's order), which numbers the last line.
  const auto rec = journalled(d.id);
  bool was_waiting = false;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.ended) return;
    if (rec && rec->last(journal::Step::revoke_requested)) {
      push_revoke_line_locked(d, *rec->last(journal::Step::revoke_requested),
                              entry_ordinal(*rec, journal::Step::revoke_requested).value_or(0));
    }
    d.outcome = o;
    d.attempt = o->attempt;
    was_waiting = d.waiting;
    d.waiting = false;
    d.ended = true;
    d.log.transition(report::finished_event(report::outcome_to_json(*o, d.facts)),
                     rec ? entry_ordinal(*rec, journal::Step::finished).value_or(0) : 0);
  }
  metrics_.delivery_finished(*o);
  if (d.auth) d.auth->after(*o);
  log_event(is_unconfirmed(o->kind) ? LogLevel::error : LogLevel::info, "finished",
            {{"delivery", d.id},
             {"outcome", outcome_name(o->kind)},
             {"remote_effect", remote_effect_name(o->remote_effect)},
             {"reason", o->reason}});
  std::shared_ptr<Delivery::Impl> keep;  // released after the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = live_set_.find(&d); it != live_set_.end()) {
      keep = std::move(it->second);
      live_set_.erase(it);
    }
    --live_;
    if (was_waiting) --queued_;
    if (is_unconfirmed(o->kind) && !o->replayed) ++unconfirmed_;  // a replay stopped nothing now
  }
  idle_cv_.notify_all();
}

// Finished deliveries beyond keep_finished are dropped from memory, oldest
// first; the journal still answers for them.
void Deliveries::forget_old_locked() {
  if (order_.size() <= opt_.keep_finished + live_) return;
  std::size_t drop = order_.size() - opt_.keep_finished - live_;
  std::vector<std::string> kept;
  for (const auto& id : order_) {
    auto it = by_id_.find(id);
    if (drop > 0 && it != by_id_.end() && it->second->impl->ended) {
      by_id_.erase(it);
      --drop;
      continue;
    }
    kept.push_back(id);
  }
  order_ = std::move(kept);
}

std::vector<std::shared_ptr<Delivery>> Deliveries::list(const std::string& state, const std::string& remote_canonical,
                                                        std::size_t limit) const {
  std::vector<std::shared_ptr<Delivery>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      auto f = by_id_.find(*it);
      if (f != by_id_.end()) all.push_back(f->second);
    }
  }
  std::vector<std::shared_ptr<Delivery>> out;
  for (auto& d : all) {
    if (out.size() >= limit) break;
    if (!remote_canonical.empty() && d->remote != remote_canonical) continue;
    if (!state.empty() && d->state() != state) continue;
    out.push_back(d);
  }
  return out;
}

RevokeResult Deliveries::revoke(const std::string& id, const std::string& cause) {
  RevokeResult r;
  auto d = find(id);
  if (!d) {
    auto rec = journalled(id);
    if (rec && rec->finished) {
      r.kind = RevokeResult::Kind::already_finished;
      if (auto last = rec->last(journal::Step::finished)) {
        if (auto o = journal::outcome_from_detail(last->detail)) r.outcome = *o;
      }
    }
    return r;
  }
  r.delivery = d;
  if (auto o = d->outcome()) {
    r.kind = RevokeResult::Kind::already_finished;
    r.outcome = o;
    return r;
  }
  bool has_handle = false;
  {
    std::lock_guard<std::mutex> lock(d->impl->mu);
    has_handle = d->impl->has_handle;
    if (!has_handle) d->impl->revoke_cause = cause;
    d->impl->revoke_asked = true;
  }
  log_event(LogLevel::info, "revoke", {{"delivery", id}, {"cause", cause}});
  // The handle says whether the revocation won before the dispatch claim;
  // the outcome that says so is recorded later, on the executor's thread.
  const RevokeAnswer answer = has_handle ? d->impl->handle.revoke(cause) : RevokeAnswer::repeated;
  revoke_line(*d->impl);
  auto o = d->outcome();
  if (answer == RevokeAnswer::cancelled || (o && o->kind == OutcomeKind::cancelled_no_dispatch)) {
    r.kind = RevokeResult::Kind::cancelled_no_dispatch;
    r.outcome = o;
  } else {
    r.kind = RevokeResult::Kind::stopping;
  }
  return r;
}

// After a live revocation: its journal entry (written before the kill,
// J1) gives the revoke_requested line its number and cause; the stream
// shows it before `finished` (which writes it if this comes too late).
void Deliveries::revoke_line(Delivery::Impl& d) {
  const auto rec = journalled(d.id);
  if (!rec) return;
  const auto e = rec->last(journal::Step::revoke_requested);
  if (!e) return;
  std::lock_guard<std::mutex> lock(d.mu);
  push_revoke_line_locked(d, *e, entry_ordinal(*rec, journal::Step::revoke_requested).value_or(0));
}

std::unique_ptr<EventStream> Deliveries::events(const std::shared_ptr<Delivery>& d, std::uint64_t after) const {
  return std::make_unique<DeliveryStream>(d->impl, after);
}

Gauges Deliveries::gauges() const {
  Gauges g;
  g.warm_ready = executor_ != nullptr ? executor_->warm_ready() : 0;
  g.queue_limit = opt_.max_queued;
  g.poisoned_lanes = seat::poisoned_lane_count();
  std::lock_guard<std::mutex> lock(mu_);
  g.live = live_;
  g.queued = queued_;
  g.unconfirmed = unconfirmed_;
  return g;
}

std::size_t Deliveries::live() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;
}

void Deliveries::stop_accepting() {
  std::lock_guard<std::mutex> lock(mu_);
  draining_ = true;
}

bool Deliveries::draining() const {
  std::lock_guard<std::mutex> lock(mu_);
  return draining_;
}

bool Deliveries::wait_idle(std::chrono::steady_clock::time_point until) const {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_until(lock, until, [&] { return live_ == 0; });
}

void Deliveries::withdraw_queued(const std::string& cause) {
  std::vector<std::shared_ptr<Delivery::Impl>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, d] : live_set_) all.push_back(d);
  }
  std::size_t withdrawn = 0;
  for (auto& d : all) {
    bool has_handle = false;
    {
      std::lock_guard<std::mutex> lock(d->mu);
      has_handle = d->has_handle;
      if (!has_handle && d->revoke_cause.empty()) {
        // Not yet handed to the executor: withdrawn as soon as it is.
        d->revoke_cause = cause;
        d->revoke_by = RevokeCause::shutdown;
        d->withdraw_only = true;
        ++withdrawn;
      }
    }
    // A drain: nobody asked for this stop, so the same id runs again (J5).
    if (has_handle && d->handle.withdraw(cause, RevokeCause::shutdown) == RevokeAnswer::cancelled) ++withdrawn;
  }
  log_event(LogLevel::info, "withdrawn", {{"queued", withdrawn}, {"live", all.size()}});
}

void Deliveries::revoke_all(const std::string& cause) {
  std::vector<std::shared_ptr<Delivery::Impl>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, d] : live_set_) all.push_back(d);
  }
  log_event(LogLevel::info, "revoke_all", {{"live", all.size()}, {"cause", cause}});
  for (auto& d : all) {
    bool has_handle = false;
    {
      std::lock_guard<std::mutex> lock(d->mu);
      has_handle = d->has_handle;
      if (!has_handle) {
        d->revoke_cause = cause;
        d->revoke_by = RevokeCause::shutdown;
      }
    }
    // A drain: nobody asked for this stop, so the same id runs again (J5).
    if (has_handle) {
      {
        std::lock_guard<std::mutex> lock(d->mu);
        d->revoke_asked = true;
      }
      d->handle.revoke(cause, RevokeCause::shutdown);
      revoke_line(*d);
    }
  }
}

}  // namespace courier::service
