// admission.cpp — whether a delivery id runs, replays or is refused (J4),
// and its durable submission (J1).
#include "seat/admission.hpp"

#include "sys/random.hpp"
#include "wire/json.hpp"
#include "wire/hex.hpp"

namespace courier::seat {

namespace {

Admission refuse(std::string why) {
  Admission a;
  a.verdict = Admission::Verdict::refuse;
  a.why = std::move(why);
  return a;
}

// The same id must name the same delivery (J4): a different repo, remote,
// or set of ref updates (journal::same_set: the updates sorted by ref with
// their rules and expected old ids, the push options, the atomic choice)
// under a known id is a mistake, never a new delivery.
std::optional<std::string> mismatch(const journal::Submission& known, const journal::Submission& asked) {
  const std::pair<const char*, std::pair<const std::string*, const std::string*>> fields[] = {
      {"repository", {&known.repo, &asked.repo}},
      {"remote", {&known.remote, &asked.remote}},
  };
  for (const auto& [name, pair] : fields) {
    if (*pair.first != *pair.second) {
      return "delivery id " + asked.id + " was submitted for another " + name + " (" + *pair.first + ", not " +
             *pair.second + "): a new delivery needs a new id";
    }
  }
  // One ref each: said as before sets, the ref or the object that differs.
  if (known.updates.size() == 1 && asked.updates.size() == 1) {
    const RefUpdate& k = known.updates.front();
    const RefUpdate& a = asked.updates.front();
    const char* what = k.ref != a.ref ? "ref" : k.oid != a.oid ? "object" : nullptr;
    if (what) {
      const bool ref = k.ref != a.ref;
      return "delivery id " + asked.id + " was submitted for another " + what + " (" + (ref ? k.ref : k.oid) +
             ", not " + (ref ? a.ref : a.oid) + "): a new delivery needs a new id";
    }
  }
  if (!journal::same_set(known, asked)) {
    return "delivery id " + asked.id + " was submitted for another set of ref updates (" +
           journal::set_identity(known) + ", not " + journal::set_identity(asked) +
           "): the same id must name the same refs, objects, update rules, push options and atomic choice; a new "
           "delivery needs a new id";
  }
  return std::nullopt;
}

// An id whose latest attempt has not finished: in flight in a live process,
// or left by one that is gone (recovery finishes it).
Admission unfinished(const journal::Record& r, const journal::Submission& asked) {
  const auto& who = r.submission.submitter;
  // Another host's process cannot be looked up here (J3 identifies a
  // process on its own host): in flight there, or left there for recovery
  // by that host, or by one that finds its lease expired and its host gone.
  if (!r.submission.host.empty() && r.submission.host != asked.host) {
    return refuse("delivery id " + r.submission.id + " is in flight on host " + r.submission.host + " (process " +
                  std::to_string(who.pid) + ", attempt " + std::to_string(r.submission.attempt) +
                  "); wait for it, or revoke it there");
  }
  if (journal::is_alive(who)) {
    return refuse("delivery id " + r.submission.id + " is in flight in process " + std::to_string(who.pid) +
                  " (attempt " + std::to_string(r.submission.attempt) + "); wait for it, or revoke it there");
  }
  return refuse("delivery id " + r.submission.id + " was left unfinished by process " + std::to_string(who.pid) +
                ", which is gone: run `git-courier recover` first");
}

// The latest attempt's journalled revocation, when one was (J5).
std::optional<journal::Entry> latest_revocation(const journal::Record& r) {
  auto e = r.last(journal::Step::revoke_requested);
  if (!e || e->attempt != r.submission.attempt) return std::nullopt;
  return e;
}

RevokeCause cause_of(const journal::Entry& revocation) {
  const std::string name = journal::detail_text(revocation.detail, "cause");
  const std::string words = journal::detail_text(revocation.detail, "reason");
  return journal::revoke_cause_in(name, words.empty() ? name : words);
}

// The outcome the id table reads: the finished entry's, where a journalled
// cancellation that won the claim stands over a recovery's `interrupted`
// (the finished entry after it was lost, J5), and a revocation's cause is
// the journalled one when the outcome names none.
std::optional<Outcome> recorded_outcome(const journal::Record& r) {
  auto last = r.last(journal::Step::finished);
  if (!last) return std::nullopt;
  auto o = journal::outcome_from_detail(last->detail);
  if (!o) return std::nullopt;
  if (o->kind == OutcomeKind::interrupted) {
    if (auto cancelled = cancelled_before_dispatch(r)) return cancelled;
  }
  return std::move(*o);
}

bool is_final_answer(OutcomeKind k) {
  return k == OutcomeKind::delivered || k == OutcomeKind::up_to_date || k == OutcomeKind::rejected;
}

SameIdAgain replay(Outcome recorded, std::string why) {
  SameIdAgain a;
  a.action = SameIdAgain::Action::replay;
  a.recorded = std::move(recorded);
  a.why = std::move(why);
  return a;
}

SameIdAgain refused(std::string why) {
  SameIdAgain a;
  a.action = SameIdAgain::Action::refuse;
  a.why = std::move(why);
  return a;
}

// The kinds that run again: nothing the remote could apply was sent (run
// as the next attempt), or it may have been (a compare-and-swap on the old
// id journalled at post_started).
SameIdAgain run_again(const journal::Record& r, const Outcome& recorded, bool resumed) {
  SameIdAgain a;
  a.recorded = recorded;
  a.attempt = r.submission.attempt + 1;
  if (recorded.remote_effect == RemoteEffect::none) {
    a.action = SameIdAgain::Action::run;
    a.resumed = resumed;
    a.why = "nothing was sent: it runs again as attempt " + std::to_string(a.attempt);
    return a;
  }
  // J4 per ref: every ref whose command was sent needs its recorded old id.
  const auto old_oids = journalled_old_oids(r);
  for (const std::string& ref : journalled_sent(r)) {
    const auto it = old_oids.find(ref);
    if (it == old_oids.end()) {
      return refused("it may have been applied (" + std::string(remote_effect_name(recorded.remote_effect)) +
                     "), and the journal has no old id of " + ref + " to compare against");
    }
    a.old_oids.emplace(ref, it->second);
  }
  if (a.old_oids.empty()) {
    return refused("it may have been applied (" + std::string(remote_effect_name(recorded.remote_effect)) +
                   "), and the journal has no old id to compare against");
  }
  a.old_oid = journalled_old_oid(r);
  a.action = SameIdAgain::Action::compare_and_swap;
  std::string olds;
  for (const auto& [ref, old] : a.old_oids) olds += (olds.empty() ? "" : ", ") + ref + " " + old;
  a.why = "it may have been applied: it runs again as attempt " + std::to_string(a.attempt) +
          ", a compare-and-swap on the old " +
          (a.old_oids.size() == 1 ? "id " + a.old_oids.begin()->second : "ids " + olds) +
          " (a ref already at its object: up_to_date; at its old id: pushed; elsewhere: rejected as stale, and an "
          "atomic delivery only as a whole)";
  return a;
}

}  // namespace

SameIdAgain::Action id_table_row(const Outcome& o, bool stop_confirmed) {
  if (is_final_answer(o.kind)) return SameIdAgain::Action::replay;
  if (is_unconfirmed(o.kind) && !stop_confirmed) return SameIdAgain::Action::refuse;
  if (o.kind == OutcomeKind::cancelled_no_dispatch || o.kind == OutcomeKind::cancel_uncertain ||
      (o.kind == OutcomeKind::revoked && revocation_is_final(o.revoked_by.value_or(RevokeCause::caller)))) {
    return SameIdAgain::Action::replay;  // a cancellation is final (J5)
  }
  return o.remote_effect == RemoteEffect::none ? SameIdAgain::Action::run : SameIdAgain::Action::compare_and_swap;
}

SameIdAgain same_id_again(const journal::Record& r) {
  auto recorded = recorded_outcome(r);
  if (!recorded) return refused("it has no readable outcome in the journal");
  const auto revocation = latest_revocation(r);
  if (!recorded->revoked_by && revocation &&
      (recorded->kind == OutcomeKind::revoked || recorded->kind == OutcomeKind::cancel_uncertain)) {
    recorded->revoked_by = cause_of(*revocation);
  }
  // J5: a cancellation by the caller or by authority that was journalled
  // is final whatever the finished entry says (a crash may have lost the
  // outcome that named it).
  const bool cancelled = revocation && revocation_is_final(cause_of(*revocation));
  const bool confirmed = r.last(journal::Step::stop_confirmed).has_value();
  const auto row = cancelled && !is_final_answer(recorded->kind) && (!is_unconfirmed(recorded->kind) || confirmed)
                       ? SameIdAgain::Action::replay
                       : id_table_row(*recorded, confirmed);
  switch (row) {
    case SameIdAgain::Action::refuse:
      return refused("its stop is unconfirmed (" + std::string(outcome_name(recorded->kind)) +
                     "): refused until `git-courier recover` confirms it");
    case SameIdAgain::Action::replay:
      if (is_final_answer(recorded->kind)) return replay(std::move(*recorded), "its outcome is final: it is replayed");
      return replay(std::move(*recorded),
                    "it was cancelled, and a cancellation is final: a new delivery needs a new id");
    case SameIdAgain::Action::run:
    case SameIdAgain::Action::compare_and_swap:
      break;
  }
  const bool resumed = (recorded->kind == OutcomeKind::interrupted && !r.last(journal::Step::claimed)) ||
                       recorded->kind == OutcomeKind::revoked;
  return run_again(r, *recorded, resumed);
}

namespace {

// A finished id, by the id table (same_id_again).
Admission finished(const journal::Record& r, const journal::Submission& asked) {
  SameIdAgain again = same_id_again(r);
  Admission a;
  switch (again.action) {
    case SameIdAgain::Action::replay:
      a.verdict = Admission::Verdict::replay;
      a.recorded = std::move(again.recorded);
      a.recorded.replayed = true;
      a.recorded.delivery_id = asked.id;
      return a;
    case SameIdAgain::Action::refuse:
      return refuse("delivery id " + asked.id + ": " + again.why);
    case SameIdAgain::Action::run:
      a.verdict = Admission::Verdict::run;
      a.attempt = again.attempt;
      a.resumed = again.resumed;
      return a;
    case SameIdAgain::Action::compare_and_swap:
      break;
  }
  // A ref whose own expect_old differs from the id it may have been
  // applied over cannot be compared against both.
  for (const RefUpdate& u : asked.updates) {
    const auto it = again.old_oids.find(u.ref);
    if (it != again.old_oids.end() && u.expect_old && *u.expect_old != it->second) {
      return refuse("delivery id " + asked.id + " may have been applied over " + it->second + " for " + u.ref +
                    "; a re-delivery compares against that, not " + *u.expect_old);
    }
  }
  a.verdict = Admission::Verdict::run;
  a.attempt = again.attempt;
  a.compare_and_swap = again.old_oids;
  if (!asked.updates.empty()) {
    const auto first = again.old_oids.find(asked.updates.front().ref);
    if (first != again.old_oids.end()) a.expect_old = first->second;
  }
  return a;
}

}  // namespace

std::optional<Outcome> cancelled_before_dispatch(const journal::Record& r) {
  const auto revoked = r.last(journal::Step::revoke_requested);
  if (!revoked || journal::detail_flag(revoked->detail, "claimed") != std::optional<bool>(false)) return std::nullopt;
  const std::string name = journal::detail_text(revoked->detail, "cause");
  std::string cause = journal::detail_text(revoked->detail, "reason");
  if (cause.empty()) cause = name;  // written before causes were named: the words were the cause
  Outcome o;
  o.kind = OutcomeKind::cancelled_no_dispatch;
  o.delivery_id = r.submission.id;
  o.attempt = r.submission.attempt;
  o.remote_effect = RemoteEffect::none;
  o.bytes_sent = 0;
  o.revoke_cause = cause;
  o.revoked_by = journal::revoke_cause_in(name, cause);
  o.reason = "revoked before dispatch: " + cause + " (the journalled cancellation, its process gone)";
  return o;
}

namespace {

// An entry's old ids: "old_oids" {ref: id}, else (written before sets) its
// "old_oid" as the submission's one ref's.
std::map<std::string, std::string> old_oids_in(const journal::Entry& e, const journal::Submission& s) {
  std::map<std::string, std::string> out;
  auto j = wire::parse_json(e.detail, "the entry");
  if (j && j->is_object()) {
    const auto it = j->find("old_oids");
    if (it != j->end() && it->is_object()) {
      for (const auto& [ref, old] : it->items()) {
        if (old.is_string()) out.emplace(ref, old.get<std::string>());
      }
    }
  }
  const std::string one = journal::detail_text(e.detail, "old_oid");
  if (out.empty() && !one.empty()) out.emplace(s.ref, one);
  return out;
}

}  // namespace

std::map<std::string, std::string> journalled_old_oids(const journal::Record& r) {
  for (auto step : {journal::Step::post_started, journal::Step::advertised}) {
    if (auto e = r.last(step)) {
      auto olds = old_oids_in(*e, r.submission);
      if (!olds.empty()) return olds;
    }
  }
  return {};
}

std::vector<std::string> journalled_sent(const journal::Record& r) {
  auto e = r.last(journal::Step::post_started);
  if (!e) return {};
  std::vector<std::string> sent;
  auto j = wire::parse_json(e->detail, "the entry");
  if (j && j->is_object()) {
    const auto it = j->find("sent");
    if (it != j->end() && it->is_array()) {
      for (const auto& ref : *it) {
        if (ref.is_string()) sent.push_back(ref.get<std::string>());
      }
      return sent;
    }
  }
  // Written before "sent": every ref it names was sent, in the request's order.
  const auto olds = old_oids_in(*e, r.submission);
  for (const RefUpdate& u : r.submission.updates) {
    if (olds.count(u.ref) != 0) sent.push_back(u.ref);
  }
  if (r.submission.updates.empty()) {
    for (const auto& [ref, old] : olds) sent.push_back(ref);
  }
  return sent;
}

std::optional<std::string> journalled_old_oid(const journal::Record& r) {
  const auto olds = journalled_old_oids(r);
  for (const RefUpdate& u : r.submission.updates) {
    if (auto it = olds.find(u.ref); it != olds.end()) return it->second;
  }
  if (!olds.empty()) return olds.begin()->second;
  return std::nullopt;
}

Admission admit(journal::Journal& j, journal::Submission draft) {
  auto known = j.find(draft.id);
  if (!known) return refuse(known.error().message);
  Admission a;
  a.verdict = Admission::Verdict::run;
  if (*known) {
    if (auto why = mismatch((*known)->submission, draft)) return refuse(*why);
    if (!(*known)->finished) return unfinished(**known, draft);
    a = finished(**known, draft);
    if (a.verdict != Admission::Verdict::run) return a;
    // A compare-and-swap's lease is journalled with its attempt; a resumed
    // attempt keeps the request's own (if any).
    if (a.expect_old) draft.expect_old = a.expect_old;
  }
  draft.attempt = a.attempt;
  if (auto ok = j.submit(draft, journal::wall_now_ms()); !ok) {
    return refuse("the delivery was not started because the journal cannot record it: " + ok.error().message);
  }
  return a;
}

std::string new_delivery_id() {
  const auto now = static_cast<unsigned long long>(journal::wall_now_ms());
  auto rnd = sys::random_bytes(10);
  std::string r = rnd ? *rnd : std::string(10, '\0');
  return wire::to_hex(now >> 16, 8) + "-" + wire::to_hex(now, 4) + "-" + wire::to_hex(r.substr(0, 2)) + "-" +
         wire::to_hex(r.substr(2, 2)) + "-" + wire::to_hex(r.substr(4));
}

}  // namespace courier::seat
