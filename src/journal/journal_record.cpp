// journal_record.cpp — the journal's shared vocabulary: step names, records, process identity (J3), and the
// details (the outcome's form is the outcome codec's, report/outcome_json.hpp).
#include <nlohmann/json.hpp>

#include "journal/journal.hpp"
#include "report/outcome_json.hpp"
#include "sys/clock.hpp"
#include "sys/process.hpp"
#include "sys/small_file.hpp"
#include "wire/json.hpp"
#include "wire/json_fields.hpp"

namespace courier::journal {

namespace {

using nlohmann::json;

constexpr const char* kBootIdPath = "/proc/sys/kernel/random/boot_id";
constexpr std::size_t kMaxBootId = 128;
// A host's note nests at most this deep: the submission's detail holds it
// one level down, and the service's answer holds that detail four levels
// down, so every document a note travels in stays under wire::kMaxJsonDepth.
constexpr std::size_t kMaxNoteDepth = 32;

// An entry's detail as JSON. A row may have been written by anyone who can
// write the shared database: it is read through the one bounded reader, and
// nullopt means "not a readable detail".
std::optional<json> read_detail(std::string_view detail) {
  auto j = wire::parse_json(detail, "the entry's detail");
  if (!j) return std::nullopt;
  return std::move(*j);
}

tl::unexpected<Error> not_an_outcome(const std::string& why) {
  return fail(Errc::journal_failed, "a finished entry's detail is not an outcome: " + why);
}

}  // namespace

// ---- steps and records --------------------------------------------------------

const char* step_name(Step s) { return enum_word(s).data(); }

std::optional<Step> step_from_name(std::string_view name) { return enum_from_word<Step>(name); }

std::vector<Entry> Record::latest() const {
  std::vector<Entry> out;
  for (const Entry& e : entries) {
    if (e.attempt == submission.attempt) out.push_back(e);
  }
  return out;
}

std::optional<Entry> Record::last(Step s) const {
  std::optional<Entry> found;
  for (const Entry& e : entries) {
    if (e.attempt == submission.attempt && e.step == s) found = e;
  }
  return found;
}

// ---- processes (J3) -------------------------------------------------------------

std::string boot_id() {
  auto file = sys::read_small_regular_file(kBootIdPath, kMaxBootId);
  if (!file) return "";
  std::string id = std::move(file->bytes);
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ' || id.back() == '\r')) id.pop_back();
  return id;
}

Result<ProcessIdentity> identify(std::int64_t pid) {
  const auto st = pid > 0 ? sys::proc_stat(static_cast<pid_t>(pid)) : std::nullopt;
  if (!st) return fail(Errc::os_error, "process " + std::to_string(pid) + " is not running (no /proc entry)");
  return ProcessIdentity{pid, st->start_ticks, boot_id()};
}

bool is_alive(const ProcessIdentity& who) {
  if (who.pid <= 0) return false;
  // Another boot: every process of that boot is gone, whatever now runs
  // under its pid. An unreadable boot id (ours or theirs) cannot tell
  // boots apart: the start time still must match, and "alive" is the
  // answer that makes recovery keep its hands off.
  const std::string now = boot_id();
  if (!who.boot_id.empty() && !now.empty() && who.boot_id != now) return false;
  const auto st = sys::proc_stat(static_cast<pid_t>(who.pid));
  if (!st || st->start_ticks != who.start_ticks) return false;
  // A zombie has run its last instruction: its descriptors (and so its
  // lane lock) were closed before it became one.
  return st->state != 'Z' && st->state != 'X';
}

std::int64_t wall_now_ms() { return sys::wall_now_ms(); }

RevokeCause revoke_cause_in(const std::string& name, const std::string& words) {
  return report::revoke_cause_in(name, words);
}

// ---- details --------------------------------------------------------------------

// The outcome's journal form is the outcome codec's (report/outcome_json.hpp).
std::string outcome_detail(const Outcome& o) { return report::outcome_record(o); }

Result<Outcome> outcome_from_detail(std::string_view detail) {
  try {
    auto o = report::outcome_from_record(detail);
    if (!o) return not_an_outcome(o.error().message);
    return o;
  } catch (const std::exception& e) {  // the codec's one catch: nothing escapes it
    return not_an_outcome(e.what());
  }
}

std::string detail_text(std::string_view detail, std::string_view field) {
  const auto j = read_detail(detail);
  if (!j || !j->is_object()) return "";
  std::string ignored;
  wire::JsonFields r(*j, "the entry's detail", ignored, wire::JsonFields::Mode::lenient);
  return r.opt_str(std::string(field).c_str()).value_or("");
}

std::optional<bool> detail_flag(std::string_view detail, std::string_view field) {
  const auto j = read_detail(detail);
  if (!j || !j->is_object()) return std::nullopt;
  std::string ignored;
  wire::JsonFields r(*j, "the entry's detail", ignored, wire::JsonFields::Mode::lenient);
  return r.opt_bool(std::string(field).c_str());
}

std::string submission_detail(const Submission& s) {
  json j = {{"id", s.id},
            {"attempt", s.attempt},
            {"repo", s.repo},
            {"remote", s.remote},
            {"lane", s.lane},
            {"ref", s.ref},
            {"oid", s.oid},
            {"deadline_unix_ms", s.deadline_unix_ms},
            {"submitter",
             {{"pid", s.submitter.pid}, {"start_ticks", s.submitter.start_ticks}, {"boot_id", s.submitter.boot_id}}}};
  j["expect_old"] = s.expect_old ? json(*s.expect_old) : json(nullptr);
  // The submitting host (a fleet's journal); absent when none was named.
  if (!s.host.empty()) j["host"] = s.host;
  // A note that is not an object never reaches here (compact_note refused
  // it at submit); one that cannot be read now is left out, not guessed.
  if (!s.note.empty()) {
    if (auto note = read_detail(s.note); note && note->is_object()) j["note"] = std::move(*note);
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string note_of_detail(std::string_view detail) {
  const auto j = read_detail(detail);
  if (!j || !j->is_object()) return "";
  const auto it = j->find("note");
  if (it == j->end() || !it->is_object()) return "";
  return it->dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<std::string> compact_note(std::string_view note, std::size_t max_bytes) {
  if (note.empty()) return std::string();
  if (note.size() > max_bytes) {
    return fail(Errc::invalid_argument, "the journal note is " + std::to_string(note.size()) + " bytes; at most " +
                                            std::to_string(max_bytes) + " are kept");
  }
  auto j = wire::parse_json(note, "the journal note");
  if (!j) return fail(Errc::invalid_argument, j.error().message);
  if (!j->is_object()) return fail(Errc::invalid_argument, "the journal note is not a JSON object");
  if (wire::json_depth(*j) > kMaxNoteDepth) {
    return fail(Errc::invalid_argument,
                "the journal note nests deeper than " + std::to_string(kMaxNoteDepth) + " levels");
  }
  return j->dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace courier::journal
