// event_numbering.cpp — the numbers of a delivery's event lines and the
// cursor that resumes them (see the header).
#include "service/event_numbering.hpp"

#include <nlohmann/json.hpp>

#include "report/event_json.hpp"
#include "report/outcome_json.hpp"

namespace courier::service {

namespace {

using nlohmann::json;

bool all_hex(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
}

Error bad_cursor() {
  return Error{Errc::invalid_argument,
               "\"after\" is SEQ or GEN:SEQ (SEQ a number up to 2^53, GEN the hex `gen` of a line)"};
}

std::string line_text(json j, std::uint64_t seq, const std::string& gen) {
  j["seq"] = seq;
  j["gen"] = gen;
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

// The line a journal entry stands for; nullopt: the entry has no event.
std::optional<json> entry_event(const journal::Entry& e, const journal::Submission& s) {
  switch (e.step) {
    case journal::Step::submitted:
      return report::queued_event();
    case journal::Step::dispatched: {
      DeliveryEvent d;
      d.kind = DeliveryEvent::Kind::dispatched;
      d.child_pid = std::atoll(journal::detail_text(e.detail, "child_pid").c_str());
      return report::event_to_json(d);
    }
    case journal::Step::revoke_requested:
      return report::revoke_requested_event(journal::detail_text(e.detail, "cause"));
    case journal::Step::finished: {
      auto o = journal::outcome_from_detail(e.detail);
      if (!o) return std::nullopt;
      return report::finished_event(report::outcome_to_json(*o, report::OutcomeFacts{s.remote, s.ref, s.oid, {}}));
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string boot_generation() {
  std::string out;
  for (char c : journal::boot_id()) {
    if (out.size() == 16) break;
    if (all_hex(std::string_view(&c, 1))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out.empty() ? std::string("0") : out;
}

Result<Cursor> parse_cursor(std::string_view text) {
  Cursor c;
  const auto colon = text.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view gen = text.substr(0, colon);
    if (!all_hex(gen) || gen.size() > kMaxGenLength) return tl::unexpected(bad_cursor());
    c.gen = std::string(gen);
    text.remove_prefix(colon + 1);
  }
  if (text.empty() || text.size() > 16 || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return tl::unexpected(bad_cursor());
  }
  c.seq = std::stoull(std::string(text));
  if (c.seq > kMaxSeq) return tl::unexpected(bad_cursor());
  return c;
}

std::uint64_t resume_after(const Cursor& cursor, const std::string& gen) {
  if (cursor.gen && *cursor.gen != gen) return 0;
  return cursor.seq;
}

std::optional<std::uint64_t> entry_ordinal(const journal::Record& r, journal::Step step) {
  std::optional<std::uint64_t> found;
  for (std::size_t i = 0; i < r.entries.size(); ++i) {
    const auto& e = r.entries[i];
    if (e.attempt == r.submission.attempt && e.step == step) found = i + 1;
  }
  return found;
}

std::vector<EventLine> journal_lines(const journal::Record& r, const std::string& gen) {
  std::vector<EventLine> out;
  for (std::size_t i = 0; i < r.entries.size(); ++i) {
    const auto& e = r.entries[i];
    if (e.attempt != r.submission.attempt) continue;
    auto j = entry_event(e, r.submission);
    if (!j) continue;
    const std::uint64_t seq = (i + 1) * kSeqStep;
    out.push_back(EventLine{seq, line_text(std::move(*j), seq, gen)});
  }
  return out;
}

}  // namespace courier::service
