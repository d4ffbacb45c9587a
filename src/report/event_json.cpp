// event_json.cpp — the event table and its two directions (see the header).
#include "report/event_json.hpp"

#include <array>
#include <variant>

#include "wire/json.hpp"

namespace courier::report {

namespace {

using nlohmann::json;
using Kind = DeliveryEvent::Kind;

// One field of an event: its key and where it lives in a DeliveryEvent. A
// count is a non-negative integer; a pid one that fits an int64 (anything
// else reads as 0).
struct Field {
  const char* key = nullptr;
  std::variant<std::string DeliveryEvent::*, std::uint64_t DeliveryEvent::*, std::int64_t DeliveryEvent::*> member;
};

struct EventRow {
  std::string_view word;
  std::optional<Kind> kind;  // nullopt: the service's own line (queued, revoke_requested)
  // progress rows named by their phase (the remote's words): the phase the
  // word stands for. Empty: the phase is a field, or not a progress row.
  std::string_view phase;
  std::array<Field, 3> fields;
  // A field the service writes that no DeliveryEvent member holds.
  std::string_view own_field = {};
};

template <typename T>
Field field(const char* key, T DeliveryEvent::*member) {
  return Field{key, member};
}

using E = DeliveryEvent;

// The events, once (docs/service.md "Events"): word, the executor's kind,
// the phase a progress row stands for, the fields.
// clang-format off
const EventRow kEventRows[] = {
    {kQueuedEvent,      std::nullopt,       "",                {}},
    {"pending",         Kind::pending,      "",                {field("holder", &E::holder), field("holder_pid", &E::holder_pid), field("holder_delivery", &E::holder_delivery)}},
    {"seat_granted",    Kind::seat_granted, "",                {}},
    {"dispatched",      Kind::dispatched,   "",                {field("child_pid", &E::child_pid)}},
    {"remote",          Kind::progress,     "remote",          {field("text", &E::text)}},
    {"remote_progress", Kind::progress,     "remote_progress", {field("text", &E::text)}},
    {"progress",        Kind::progress,     "",                {field("phase", &E::phase), field("done", &E::done), field("total", &E::total)}},
    {kRevokeRequestedEvent, std::nullopt,   "",                {}, "cause"},
    {"finished",        Kind::finished,     "",                {}, "outcome"},
};
// clang-format on

// The row an event is written with: its kind's, and for progress, the row
// its phase names, else "progress".
const EventRow& row_for(const DeliveryEvent& e) {
  const EventRow* found = nullptr;
  for (const auto& row : kEventRows) {
    if (row.kind != e.kind) continue;
    if (!row.phase.empty() && row.phase != e.phase) continue;
    if (!found || (!row.phase.empty() && found->phase.empty())) found = &row;
  }
  return *found;  // every kind has a row (the test of the table)
}

const EventRow* row_named(std::string_view word) {
  for (const auto& row : kEventRows) {
    if (row.word == word) return &row;
  }
  return nullptr;
}

std::uint64_t count_of(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

void read_field(const json& obj, const Field& f, DeliveryEvent& e) {
  std::visit(
      [&](auto member) {
        using T = std::decay_t<decltype(e.*member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          const auto it = obj.find(f.key);
          e.*member = it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
        } else if constexpr (std::is_same_v<T, std::uint64_t>) {
          e.*member = count_of(obj, f.key);
        } else {
          const auto n = count_of(obj, f.key);
          e.*member = n <= static_cast<std::uint64_t>(INT64_MAX) ? static_cast<std::int64_t>(n) : 0;
        }
      },
      f.member);
}

Result<DecodedOutcome> outcome_in(const json& e) {
  const auto it = e.find("outcome");
  if (it == e.end()) return fail(Errc::missing_field, "the finished event has no outcome");
  return outcome_from_json(*it);
}

}  // namespace

json event_to_json(const DeliveryEvent& e) {
  const EventRow& row = row_for(e);
  json j;
  j["event"] = row.word;
  for (const Field& f : row.fields) {
    if (f.key == nullptr) break;
    std::visit([&](auto member) { j[f.key] = e.*member; }, f.member);
  }
  return j;
}

json queued_event() { return json{{"event", kQueuedEvent}}; }

json finished_event(json outcome_document) {
  return json{{"event", "finished"}, {"outcome", std::move(outcome_document)}};
}

json revoke_requested_event(std::string_view cause) { return json{{"event", kRevokeRequestedEvent}, {"cause", cause}}; }

std::vector<EventDoc> event_table() {
  std::vector<EventDoc> out;
  for (const auto& row : kEventRows) {
    EventDoc d{row.word, {}};
    for (const Field& f : row.fields) {
      if (f.key != nullptr) d.fields.emplace_back(f.key);
    }
    if (!row.own_field.empty()) d.fields.push_back(row.own_field);
    out.push_back(std::move(d));
  }
  return out;
}

std::optional<DecodedEvent> event_from_json(std::string_view line) {
  auto doc = wire::parse_json(line, "an event");
  if (!doc || !doc->is_object()) return std::nullopt;
  const json& e = *doc;
  if (count_of(e, "seq") == 0 || !e.contains("event")) return std::nullopt;
  DecodedEvent out;
  out.seq = count_of(e, "seq");
  if (const auto g = e.find("gen"); g != e.end() && g->is_string()) out.gen = g->get<std::string>();
  const auto word = e.find("event");
  out.name = word->is_string() ? word->get<std::string>() : std::string();
  const EventRow* row = row_named(out.name);
  if (!row || !row->kind) return out;
  out.kind = row->kind;
  out.event.kind = *row->kind;
  if (!row->phase.empty()) out.event.phase = std::string(row->phase);
  for (const Field& f : row->fields) {
    if (f.key == nullptr) break;
    read_field(e, f, out.event);
  }
  if (out.event.kind == Kind::finished) out.outcome = outcome_in(e);
  return out;
}

}  // namespace courier::report
