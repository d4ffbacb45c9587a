// admission.cpp — whether a delivery id runs, replays or is refused (J4),
// and its durable submission (J1).
#include "seat/admission.hpp"

#include <cstdio>

#include "sys/random.hpp"

namespace courier::seat {

namespace {

Admission refuse(std::string why) {
  Admission a;
  a.verdict = Admission::Verdict::refuse;
  a.why = std::move(why);
  return a;
}

// The same id must name the same delivery: a different repo, remote, ref or
// object under a known id is a mistake, never a new delivery.
std::optional<std::string> mismatch(const journal::Submission& known, const journal::Submission& asked) {
  const std::pair<const char*, std::pair<const std::string*, const std::string*>> fields[] = {
      {"repository", {&known.repo, &asked.repo}},
      {"remote", {&known.remote, &asked.remote}},
      {"ref", {&known.ref, &asked.ref}},
      {"object", {&known.oid, &asked.oid}},
  };
  for (const auto& [name, pair] : fields) {
    if (*pair.first != *pair.second) {
      return "delivery id " + asked.id + " was submitted for another " + name + " (" + *pair.first + ", not " +
             *pair.second + "): a new delivery needs a new id";
    }
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

// True when the latest attempt ended interrupted before its dispatch claim:
// its process died while it was queued, so no child could have existed and
// nothing was sent (remote_effect none, no claimed entry). Running it again
// is the same delivery, not a second one.
bool interrupted_before_claim(const journal::Record& r, const Outcome& recorded) {
  return recorded.kind == OutcomeKind::interrupted && recorded.remote_effect == RemoteEffect::none &&
         !r.last(journal::Step::claimed);
}

// True when the latest attempt was stopped because its lane's lease was
// lost (L1: a renewal failed, or the lease bound came), before anything was
// sent. Nobody asked for that stop: running it again is the same delivery.
bool lost_its_lease_unsent(const Outcome& recorded) {
  return recorded.kind == OutcomeKind::revoked && recorded.remote_effect == RemoteEffect::none &&
         recorded.revoke_cause.rfind(kLeaseLostCause, 0) == 0;
}

// A finished id: replay it, run it again when it was interrupted before its
// dispatch claim, or run it again as a compare-and-swap when it ended
// interrupted or revoked with the remote's effect `possible`. A cancellation
// that won the claim is final whatever the finished entry says (a recovery
// that finished it `interrupted` before J5 was kept).
Admission finished(const journal::Record& r, const journal::Submission& asked) {
  auto last = r.last(journal::Step::finished);
  auto recorded = last ? journal::outcome_from_detail(last->detail) : Result<Outcome>(fail(Errc::journal_failed, ""));
  if (!recorded) return refuse("delivery id " + asked.id + " has no readable outcome in the journal");
  if (recorded->kind == OutcomeKind::interrupted) {
    if (auto cancelled = cancelled_before_dispatch(r)) recorded = std::move(*cancelled);
  }
  if (interrupted_before_claim(r, *recorded) || lost_its_lease_unsent(*recorded)) {
    Admission a;
    a.verdict = Admission::Verdict::run;
    a.attempt = r.submission.attempt + 1;
    a.resumed = true;
    return a;
  }
  const bool again = (recorded->kind == OutcomeKind::interrupted || recorded->kind == OutcomeKind::revoked) &&
                     recorded->remote_effect == RemoteEffect::possible;
  if (!again) {
    Admission a;
    a.verdict = Admission::Verdict::replay;
    a.recorded = std::move(*recorded);
    a.recorded.replayed = true;
    a.recorded.delivery_id = asked.id;
    return a;
  }
  auto old = journalled_old_oid(r);
  if (!old)
    return refuse("delivery id " + asked.id + " may have been applied, and the journal has no old id to compare");
  if (asked.expect_old && *asked.expect_old != *old) {
    return refuse("delivery id " + asked.id + " may have been applied over " + *old +
                  "; a re-delivery compares against that, not " + *asked.expect_old);
  }
  Admission a;
  a.verdict = Admission::Verdict::run;
  a.attempt = r.submission.attempt + 1;
  a.expect_old = *old;
  return a;
}

}  // namespace

std::optional<Outcome> cancelled_before_dispatch(const journal::Record& r) {
  const auto revoked = r.last(journal::Step::revoke_requested);
  if (!revoked || journal::detail_flag(revoked->detail, "claimed") != std::optional<bool>(false)) return std::nullopt;
  const std::string cause = journal::detail_text(revoked->detail, "cause");
  Outcome o;
  o.kind = OutcomeKind::cancelled_no_dispatch;
  o.delivery_id = r.submission.id;
  o.attempt = r.submission.attempt;
  o.remote_effect = RemoteEffect::none;
  o.bytes_sent = 0;
  o.revoke_cause = cause;
  o.reason = "revoked before dispatch: " + cause + " (the journalled cancellation, its process gone)";
  return o;
}

std::optional<std::string> journalled_old_oid(const journal::Record& r) {
  for (auto step : {journal::Step::post_started, journal::Step::advertised}) {
    if (auto e = r.last(step)) {
      std::string old = journal::detail_text(e->detail, "old_oid");
      if (!old.empty()) return old;
    }
  }
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
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-", (now >> 16) & 0xffffffffULL, now & 0xffffULL);
  std::string id = buf;
  static const char* const kHex = "0123456789abcdef";
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (i == 2 || i == 4) id += '-';
    id += kHex[static_cast<unsigned char>(r[i]) >> 4];
    id += kHex[static_cast<unsigned char>(r[i]) & 0xf];
  }
  return id;
}

}  // namespace courier::seat
