// service_note.cpp — the service's note in the journal (resume.hpp's
// ServiceNote): what a resubmission after a crash needs beyond the
// submission (the credential's name, the update rule, the set of refs, the
// atomic choice, the push options), written and read back. Apart from the
// resume itself, so that the submission's own check of the note's size
// needs nothing of the executor.
#include <nlohmann/json.hpp>

#include "service/resume.hpp"
#include "wire/json.hpp"
#include "wire/json_fields.hpp"

namespace courier::service {

using nlohmann::json;

namespace {

json updates_json(const std::vector<RefUpdate>& updates) {
  json out = json::array();
  for (const auto& u : updates) {
    json e = {{"ref", u.ref}, {"oid", u.oid}, {"update", std::string(update_mode_word(u.update))}};
    if (u.expect_old) e["expect_old"] = *u.expect_old;
    out.push_back(std::move(e));
  }
  return out;
}

// The set read back; nullopt when an element is not one this program
// wrote (a rule it does not know is not guessed).
std::optional<std::vector<RefUpdate>> updates_from(const json& list) {
  std::vector<RefUpdate> out;
  if (!list.is_array()) return std::nullopt;
  for (const auto& e : list) {
    if (!e.is_object() || !e.contains("ref") || !e["ref"].is_string() || !e.contains("oid") || !e["oid"].is_string())
      return std::nullopt;
    RefUpdate u{e["ref"].get<std::string>(), e["oid"].get<std::string>(), UpdateMode::fast_forward, std::nullopt};
    const auto mode = update_mode_from_word(e.value("update", std::string("fast_forward")));
    if (!mode) return std::nullopt;
    u.update = *mode;
    if (e.contains("expect_old") && e["expect_old"].is_string()) u.expect_old = e["expect_old"].get<std::string>();
    out.push_back(std::move(u));
  }
  return out;
}

// "updates", "atomic" and "push_options" read into the note. False: not
// this program's.
bool read_set(const json& parsed, ServiceNote& n) {
  if (parsed.contains("updates")) {
    auto updates = updates_from(parsed["updates"]);
    if (!updates) return false;
    n.updates = std::move(*updates);
  }
  if (parsed.contains("atomic")) {
    const auto word =
        parsed["atomic"].is_string() ? enum_from_word<Atomicity>(parsed["atomic"].get<std::string>()) : std::nullopt;
    if (!word) return false;
    n.atomic = *word;
  }
  if (parsed.contains("push_options")) {
    if (!parsed["push_options"].is_array()) return false;
    for (const auto& v : parsed["push_options"]) {
      if (!v.is_string()) return false;
      n.push_options.push_back(v.get<std::string>());
    }
  }
  return true;
}

}  // namespace

std::string note_text(const ServiceNote& n) {
  json j = {{"credential", n.credential ? json(*n.credential) : json(nullptr)},
            {"update", std::string(update_mode_word(n.update))},
            {"remote_progress", n.remote_progress},
            {"service", true}};
  if (!n.updates.empty()) j["updates"] = updates_json(n.updates);
  if (n.atomic != Atomicity::automatic) j["atomic"] = std::string(enum_word(n.atomic));
  if (!n.push_options.empty()) j["push_options"] = n.push_options;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<ServiceNote> note_from(std::string_view note) {
  if (note.empty()) return std::nullopt;
  try {
    const auto parsed = wire::parse_json(note, "the service's note");
    if (!parsed || !parsed->is_object()) return std::nullopt;
    std::string ignored;
    wire::JsonFields r(*parsed, "the service's note", ignored, wire::JsonFields::Mode::lenient);
    if (!r.opt_bool("service").value_or(false)) return std::nullopt;
    ServiceNote n;
    n.credential = r.opt_str("credential");
    if (parsed->contains("update")) {
      const auto mode = update_mode_from_word(r.opt_str("update").value_or(""));
      if (!mode) return std::nullopt;  // a mode we cannot honour is not guessed
      n.update = *mode;
    }
    n.remote_progress = r.opt_bool("remote_progress").value_or(n.remote_progress);
    if (!read_set(*parsed, n)) return std::nullopt;
    return n;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace courier::service
