// resume.cpp — finding the deliveries a crashed service left queued, and
// rebuilding their requests from the journal (submission + the service's note).
#include "service/resume.hpp"

#include <nlohmann/json.hpp>

#include "service/service_log.hpp"

namespace courier::service {

using nlohmann::json;

Result<std::vector<LeftBehind>> find_left_behind(journal::Journal& j) {
  auto work = j.open_work();
  if (!work) return tl::unexpected(work.error());
  std::vector<LeftBehind> out;
  for (const auto& r : *work) {
    if (r.finished) continue;  // a retained stop to confirm: recovery's, never resumed
    // A revocation is final (J1); a POST that may have begun is `possible`:
    // recovery reads it back, and it is never sent again without being asked.
    if (r.last(journal::Step::revoke_requested) || r.last(journal::Step::post_started)) continue;
    if (journal::is_alive(r.submission.submitter)) continue;  // J3: a live process's own
    auto note = note_from(r.submission.note);
    if (!note) continue;  // not the service's
    out.push_back(LeftBehind{r.submission, *note, r.last(journal::Step::claimed).has_value()});
  }
  return out;
}

Result<SubmitInput> resubmission(const LeftBehind& lb, const ServiceCredentials& credentials,
                                 bool allow_http_loopback) {
  const journal::Submission& s = lb.submission;
  SubmitInput in;
  in.id = s.id;
  // The journal's row judged as a request is (a shared database's row may
  // be hostile): its remote read here, once (H2).
  DeliveryRequest req;
  req.repo = s.repo;
  req.remote = s.remote;  // canonical, and without user information (H2)
  if (lb.note.updates.empty()) {
    req.ref = s.ref;
    req.oid = s.oid;
    req.update = lb.note.update;
    req.expect_old = s.expect_old;
  } else {
    req.updates = lb.note.updates;  // J4: the whole set, as first submitted
  }
  req.atomic = lb.note.atomic;
  req.push_options = lb.note.push_options;
  req.allow_http_loopback = allow_http_loopback;
  // A5: an ssh remote's key is its credential's, looked up below.
  if (lb.note.credential) {
    if (const auto it = credentials.find(*lb.note.credential); it != credentials.end())
      req.ssh_key = it->second.ssh_key;
  }
  auto checked = validate(std::move(req));
  if (!checked) return fail(Errc::invalid_argument, describe(checked.error()));
  in.checked = std::move(*checked);
  in.deadline_unix_ms = s.deadline_unix_ms;
  in.remote_progress = lb.note.remote_progress;
  if (lb.note.credential) {
    const auto it = credentials.find(*lb.note.credential);
    if (it == credentials.end()) {
      return fail(Errc::invalid_argument, "its credential " + *lb.note.credential + " is no longer configured");
    }
    // The journal is no authority on where a credential may go: the scope
    // configured now is (a delivery whose remote left it is not resumed).
    if (!scope_admits(it->second.scope, in.checked)) {
      return fail(Errc::invalid_argument, out_of_scope_message(it->first, s.remote));
    }
    in.credential = it->first;
    in.credential_spec = it->second.spec;
  }
  return in;
}

namespace {

// A claimed delivery is sent again only once recovery finished it with
// nothing sent (its child stopped, confirmed): `interrupted`, none.
bool ended_without_effect(const Deliveries& deliveries, const std::string& id) {
  const auto r = deliveries.journalled(id);
  if (!r || !r->finished) return false;
  const auto last = r->last(journal::Step::finished);
  if (!last) return false;
  const auto o = journal::outcome_from_detail(last->detail);
  return o && o->remote_effect == RemoteEffect::none && !is_unconfirmed(o->kind);
}

}  // namespace

std::size_t resume_left_behind(const std::vector<LeftBehind>& left, Deliveries& deliveries,
                               const ServiceCredentials& credentials, bool allow_http_loopback) {
  std::size_t submitted = 0;
  for (const LeftBehind& lb : left) {
    const std::string& id = lb.submission.id;
    if (lb.claimed && !ended_without_effect(deliveries, id)) {
      log_event(LogLevel::warn, "resume_refused",
                {{"delivery", id}, {"message", "recovery did not finish it with remote_effect none"}});
      continue;
    }
    auto in = resubmission(lb, credentials, allow_http_loopback);
    if (!in) {
      log_event(LogLevel::warn, "resume_refused", {{"delivery", id}, {"message", in.error().message}});
      continue;
    }
    const SubmitResult r = deliveries.submit(*in);
    const bool ok = r.kind == SubmitResult::Kind::accepted || r.kind == SubmitResult::Kind::existing;
    if (!ok) {
      log_event(LogLevel::warn, "resume_refused",
                {{"delivery", id}, {"message", r.message.empty() ? std::string("not accepted") : r.message}});
      continue;
    }
    ++submitted;
    log_event(LogLevel::info, "resumed",
              {{"delivery", id},
               {"attempt", r.delivery ? r.delivery->attempt() : 0},
               {"deadline_unix_ms", lb.submission.deadline_unix_ms}});
  }
  return submitted;
}

}  // namespace courier::service
