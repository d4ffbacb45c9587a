// via_answer.cpp — the service's answers read with the bounded reader, each
// field checked for its type (nlohmann/json's value() throws on a field of
// another type; nothing here does).
#include "cli/via_answer.hpp"

#include <nlohmann/json.hpp>

#include "wire/json.hpp"

namespace courier::cli {

namespace {

using nlohmann::json;

std::optional<json> read_object(std::string_view body, const char* what) {
  auto doc = wire::parse_json(body, what);
  if (!doc || !doc->is_object()) return std::nullopt;
  return std::move(*doc);
}

std::string text_of(const json& obj, const char* key, std::string fallback = {}) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::uint64_t count_of(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

// A pid: a non-negative integer that fits (anything else reads as 0).
std::int64_t pid_of(const json& obj, const char* key) {
  const auto n = count_of(obj, key);
  return n <= static_cast<std::uint64_t>(INT64_MAX) ? static_cast<std::int64_t>(n) : 0;
}

Result<report::DecodedOutcome> outcome_in(const json& e) {
  const auto it = e.find("outcome");
  if (it == e.end()) return fail(Errc::missing_field, "the finished event has no outcome");
  return report::outcome_from_json(*it);
}

}  // namespace

std::string refusal_message(long status, std::string_view body) {
  std::string message = "the service answered " + std::to_string(status);
  const auto doc = read_object(body, "the service's refusal");
  if (!doc) return message;
  const auto e = doc->find("error");
  if (e == doc->end() || !e->is_object()) return message;
  message = text_of(*e, "message", "(no message)") + " (" + std::to_string(status) + " " + text_of(*e, "code", "?");
  if (const auto field = e->find("field"); field != e->end() && field->is_string()) {
    message += ", field " + field->get<std::string>();
  }
  return message + ")";
}

Result<SubmitAnswer> read_submit_answer(long status, std::string_view body) {
  const auto doc = read_object(body, "the service's answer to the submission");
  if (!doc || text_of(*doc, "id").empty()) {
    return fail(Errc::invalid_value, "the service's answer to the submission has no delivery id");
  }
  SubmitAnswer a{text_of(*doc, "id"), std::nullopt};
  if (status == 200 && doc->contains("outcome")) {
    auto outcome = report::outcome_from_json((*doc)["outcome"]);
    if (!outcome) return tl::unexpected(outcome.error());
    a.replayed = std::move(*outcome);
  }
  return a;
}

std::string read_revoke_answer(std::string_view body) {
  const auto doc = read_object(body, "the service's answer to the revocation");
  return doc ? text_of(*doc, "result", "?") : "?";
}

std::optional<ServiceEvent> read_event_line(std::string_view line) {
  const auto e = read_object(line, "an event");
  if (!e || count_of(*e, "seq") == 0 || !e->contains("event")) return std::nullopt;
  ServiceEvent out;
  out.seq = count_of(*e, "seq");
  out.name = text_of(*e, "event");
  DeliveryEvent& ev = out.event;
  if (out.name == "pending") {
    ev.kind = DeliveryEvent::Kind::pending;
    ev.holder = text_of(*e, "holder");
    ev.holder_pid = pid_of(*e, "holder_pid");
    ev.holder_delivery = count_of(*e, "holder_delivery");
  } else if (out.name == "progress" || out.name == "remote" || out.name == "remote_progress") {
    ev.kind = DeliveryEvent::Kind::progress;
    ev.phase = out.name == "progress" ? text_of(*e, "phase") : out.name;
    ev.done = count_of(*e, "done");
    ev.total = count_of(*e, "total");
    ev.text = text_of(*e, "text");
  } else if (out.name == "dispatched") {
    ev.kind = DeliveryEvent::Kind::dispatched;
    ev.child_pid = pid_of(*e, "child_pid");
  } else if (out.name == "finished") {
    ev.kind = DeliveryEvent::Kind::finished;
    out.outcome = outcome_in(*e);
  }
  return out;
}

}  // namespace courier::cli
