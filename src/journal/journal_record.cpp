// journal_record.cpp — the journal's shared vocabulary: step names, records, process identity (J3) and the outcome
// codec.
#include <nlohmann/json.hpp>

#include "journal/journal.hpp"
#include "sys/clock.hpp"
#include "sys/process.hpp"
#include "sys/small_file.hpp"
#include "wire/json.hpp"

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

// ---- reading a detail: every field checked for its type, never thrown ----

std::string text_field(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<std::string> opt_text(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<std::uint64_t> opt_count(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<std::uint64_t>();
}

std::int64_t int_field(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

bool bool_field(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

json observed_json(const ObservedAfter& o) {
  return json{{"oid", o.oid},
              {"at_unix_ms", o.at_unix_ms},
              {"matches_this_delivery", o.matches_this_delivery},
              {"error", o.error}};
}

ObservedAfter observed_from(const json& j) {
  ObservedAfter o;
  o.oid = text_field(j, "oid");
  o.at_unix_ms = int_field(j, "at_unix_ms");
  o.matches_this_delivery = bool_field(j, "matches_this_delivery");
  o.error = text_field(j, "error");
  return o;
}

std::optional<RevokeCause> revoked_by_of(const json& j, const std::string& words) {
  if (words.empty() && text_field(j, "revoked_by").empty()) return std::nullopt;
  return revoke_cause_in(text_field(j, "revoked_by"), words);
}

tl::unexpected<Error> not_an_outcome(const std::string& why) {
  return fail(Errc::journal_failed, "a finished entry's detail is not an outcome: " + why);
}

Result<Outcome> outcome_from_json(const json& j) {
  if (!j.is_object()) return not_an_outcome("not a JSON object");
  const auto kind = outcome_from_name(text_field(j, "kind"));
  if (!kind) return not_an_outcome("no known kind ('" + text_field(j, "kind") + "')");
  const auto effect = remote_effect_from_name(text_field(j, "remote_effect"));
  if (!effect) return not_an_outcome("no known remote_effect ('" + text_field(j, "remote_effect") + "')");
  Outcome o;
  o.kind = *kind;
  o.remote_effect = *effect;
  o.reason = text_field(j, "reason");
  o.delivery_id = text_field(j, "delivery_id");
  o.attempt = static_cast<int>(int_field(j, "attempt"));
  o.old_oid = opt_text(j, "old_oid");
  o.objects = opt_count(j, "objects");
  o.bytes_sent = opt_count(j, "bytes_sent");
  o.kill_domain = text_field(j, "kill_domain");
  if (const auto failure = opt_text(j, "stop_failure")) o.stop_failure = outcome_from_name(*failure);
  o.revoke_cause = text_field(j, "revoke_cause");
  o.revoked_by = revoked_by_of(j, o.revoke_cause);
  o.revoke_unjournalled = bool_field(j, "revoke_unjournalled");
  o.scratch_kept = text_field(j, "scratch_kept");
  o.journal_error = text_field(j, "journal_error");
  o.dispatched = bool_field(j, "dispatched");
  if (const auto child = j.find("child"); child != j.end() && child->is_object()) {
    o.child.pid = int_field(*child, "pid");
  }
  if (const auto seen = j.find("observed_after"); seen != j.end() && seen->is_object()) {
    o.observed_after = observed_from(*seen);
  }
  return o;
}

}  // namespace

// ---- steps and records --------------------------------------------------------

const char* step_name(Step s) {
  switch (s) {
#define COURIER_JOURNAL_STEP_NAME(n) \
  case Step::n:                      \
    return #n;
    COURIER_JOURNAL_STEP_LIST(COURIER_JOURNAL_STEP_NAME)
#undef COURIER_JOURNAL_STEP_NAME
  }
  return "unknown";
}

std::optional<Step> step_from_name(std::string_view name) {
#define COURIER_JOURNAL_STEP_PARSE(n) \
  if (name == #n) return Step::n;
  COURIER_JOURNAL_STEP_LIST(COURIER_JOURNAL_STEP_PARSE)
#undef COURIER_JOURNAL_STEP_PARSE
  return std::nullopt;
}

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
  if (auto named = revoke_cause_from_name(name)) return *named;
  // Written before causes were named: the words of a lost lease and of
  // authority begin with their cause, the executor's shutdown says so, and
  // anything else came from a caller.
  if (words.rfind(kLeaseLostCause, 0) == 0) return RevokeCause::lease_lost;
  if (words.rfind("authority", 0) == 0) return RevokeCause::authority;
  if (words.find("shutting down") != std::string::npos) return RevokeCause::shutdown;
  return RevokeCause::caller;
}

// ---- details --------------------------------------------------------------------

std::string outcome_detail(const Outcome& o) {
  json j = {{"kind", outcome_name(o.kind)},
            {"reason", o.reason},
            {"delivery_id", o.delivery_id},
            {"attempt", o.attempt},
            {"remote_effect", remote_effect_name(o.remote_effect)},
            {"kill_domain", o.kill_domain},
            {"revoke_cause", o.revoke_cause},
            {"revoke_unjournalled", o.revoke_unjournalled},
            {"scratch_kept", o.scratch_kept},
            {"journal_error", o.journal_error},
            {"dispatched", o.dispatched}};
  if (o.old_oid) j["old_oid"] = *o.old_oid;
  if (o.objects) j["objects"] = *o.objects;
  if (o.bytes_sent) j["bytes_sent"] = *o.bytes_sent;
  if (o.stop_failure) j["stop_failure"] = outcome_name(*o.stop_failure);
  if (o.revoked_by) j["revoked_by"] = revoke_cause_name(*o.revoked_by);
  if (o.child.pid != 0) j["child"] = json{{"pid", o.child.pid}};
  if (o.observed_after) j["observed_after"] = observed_json(*o.observed_after);
  // Text from elsewhere (a remote's reason) may hold invalid UTF-8: replaced, never thrown.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<Outcome> outcome_from_detail(std::string_view detail) {
  auto j = wire::parse_json(detail, "it");
  if (!j) return not_an_outcome(j.error().message);
  try {
    return outcome_from_json(*j);
  } catch (const std::exception& e) {  // the codec's one catch: nothing escapes it
    return not_an_outcome(e.what());
  }
}

std::string detail_text(std::string_view detail, std::string_view field) {
  const auto j = read_detail(detail);
  if (!j || !j->is_object()) return "";
  const auto it = j->find(std::string(field));
  return it != j->end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<bool> detail_flag(std::string_view detail, std::string_view field) {
  const auto j = read_detail(detail);
  if (!j || !j->is_object()) return std::nullopt;
  const auto it = j->find(std::string(field));
  if (it == j->end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
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
