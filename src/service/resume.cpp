// resume.cpp — finding the deliveries a crashed service left queued, and
// rebuilding their requests from the journal (submission + the service's note).
#include "service/resume.hpp"

#include <nlohmann/json.hpp>

namespace courier::service {

using nlohmann::json;

std::string note_text(const ServiceNote& n) {
  json j = {{"credential", n.credential ? json(*n.credential) : json(nullptr)},
            {"update", std::string(update_mode_word(n.update))},
            {"remote_progress", n.remote_progress},
            {"service", true}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<ServiceNote> note_from(std::string_view note) {
  if (note.empty()) return std::nullopt;
  try {
    const json j = json::parse(note, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return std::nullopt;
    const auto service = j.find("service");
    if (service == j.end() || !service->is_boolean() || !service->get<bool>()) return std::nullopt;
    ServiceNote n;
    if (const auto c = j.find("credential"); c != j.end() && c->is_string()) n.credential = c->get<std::string>();
    if (const auto u = j.find("update"); u != j.end()) {
      const auto mode = u->is_string() ? update_mode_from_word(u->get<std::string>()) : std::nullopt;
      if (!mode) return std::nullopt;  // a mode we cannot honour is not guessed
      n.update = *mode;
    }
    if (const auto p = j.find("remote_progress"); p != j.end() && p->is_boolean()) n.remote_progress = p->get<bool>();
    return n;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Result<std::vector<LeftBehind>> find_left_behind(journal::Journal& j) {
  auto work = j.open_work();
  if (!work) return tl::unexpected(work.error());
  std::vector<LeftBehind> out;
  for (const auto& r : *work) {
    if (r.finished) continue;  // a retained stop to confirm: recovery's, never resumed
    if (r.last(journal::Step::claimed) || r.last(journal::Step::revoke_requested)) continue;
    if (journal::is_alive(r.submission.submitter)) continue;  // J3: a live process's own
    auto note = note_from(r.submission.note);
    if (!note) continue;  // not the service's
    out.push_back(LeftBehind{r.submission, *note});
  }
  return out;
}

DeliveryRequest rebuild_request(const LeftBehind& lb) {
  const journal::Submission& s = lb.submission;
  DeliveryRequest r;
  r.id = s.id;
  r.repo = s.repo;
  r.remote = s.remote;
  r.ref = s.ref;
  r.oid = s.oid;
  r.expect_old = s.expect_old;
  r.update = lb.note.update;
  r.remote_progress = lb.note.remote_progress;
  r.deadline_unix_ms = s.deadline_unix_ms;
  r.journal_note = s.note;  // as it was: fields this program does not read are kept too
  return r;
}

}  // namespace courier::service
