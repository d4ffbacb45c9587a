// via_answer.cpp — the service's answers read with the bounded reader, each
// field through wire::JsonFields (checked for its type; nlohmann/json's
// value() throws on a field of another type; nothing here does).
#include "cli/via_answer.hpp"

#include <nlohmann/json.hpp>

#include "wire/json.hpp"
#include "wire/json_fields.hpp"

namespace courier::cli {

namespace {

using nlohmann::json;
using Fields = wire::JsonFields;

std::optional<json> read_object(std::string_view body, const char* what) {
  auto doc = wire::parse_json(body, what);
  if (!doc || !doc->is_object()) return std::nullopt;
  return std::move(*doc);
}

}  // namespace

std::string refusal_message(long status, std::string_view body) {
  std::string message = "the service answered " + std::to_string(status);
  const auto doc = read_object(body, "the service's refusal");
  if (!doc) return message;
  std::string ignored;  // lenient: what is missing reads as its fallback
  Fields top(*doc, "the refusal", ignored, Fields::Mode::lenient);
  const json* e = top.object("error", true);
  if (!e) return message;
  Fields r(*e, "the refusal's error", ignored, Fields::Mode::lenient);
  message = r.opt_str("message").value_or("(no message)") + " (" + std::to_string(status) + " " +
            r.opt_str("code").value_or("?");
  if (const auto field = r.opt_str("field")) message += ", field " + *field;
  return message + ")";
}

Result<SubmitAnswer> read_submit_answer(long status, std::string_view body) {
  const auto doc = read_object(body, "the service's answer to the submission");
  std::string ignored;
  const std::string id =
      doc ? Fields(*doc, "the answer", ignored, Fields::Mode::lenient).opt_str("id").value_or("") : "";
  if (id.empty()) return fail(Errc::invalid_value, "the service's answer to the submission has no delivery id");
  SubmitAnswer a{id, std::nullopt};
  if (const auto outcome_doc = doc->find("outcome"); status == 200 && outcome_doc != doc->end()) {
    auto outcome = report::outcome_from_json(*outcome_doc);
    if (!outcome) return tl::unexpected(outcome.error());
    a.replayed = std::move(*outcome);
  }
  return a;
}

std::string read_revoke_answer(std::string_view body) {
  const auto doc = read_object(body, "the service's answer to the revocation");
  std::string ignored;
  return doc ? Fields(*doc, "the answer", ignored, Fields::Mode::lenient).opt_str("result").value_or("?") : "?";
}

std::optional<ServiceEvent> read_event_line(std::string_view line) { return report::event_from_json(line); }

}  // namespace courier::cli
