// event_numbering.hpp — how the service numbers a delivery's event lines so
// that a cursor (`?after=SEQ` or `?after=GEN:SEQ`) means the same line after
// any restart (Q3, docs/service.md "Follow"):
//
// * a journalled transition's line (queued = `submitted`, dispatched,
//   revoke_requested, finished) has seq = k * kSeqStep, k being that entry's
//   ordinal among all the delivery's journal entries (every attempt, 1 first);
// * a line that is not journalled (pending, seat_granted, progress, remote)
//   is numbered above the last journalled one: k * kSeqStep + 1, + 2, ...
//
// A restarted service reads the same k from the journal, and its next
// transition is a new entry, so it is numbered above every line an earlier
// process gave. What a crash can lose is an unsynced entry (SQLite,
// synchronous=NORMAL): it survives the process and is lost only with the
// kernel's page cache, i.e. across a boot. So every line carries `gen`, a
// short form of this boot's id: a cursor whose GEN is not this one may
// name a number that was lost and given again to another transition, and
// the stream starts again from its first event.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "courier/result.hpp"
#include "journal/journal.hpp"

namespace courier::service {

// The gap between two journalled transitions' numbers.
inline constexpr std::uint64_t kSeqStep = 1'000'000;
// The largest cursor taken (a JSON integer any client reads exactly).
inline constexpr std::uint64_t kMaxSeq = 1ULL << 53;
// The longest GEN a cursor may name (a boot id's 32 hex digits).
inline constexpr std::size_t kMaxGenLength = 32;

// This host's generation: the first 16 hex digits of its boot id (dashes
// dropped); "0" when the boot id cannot be read.
std::string boot_generation();

// A cursor as `?after=` gives it.
struct Cursor {
  std::optional<std::string> gen;  // none: `after=SEQ`, taken as this generation
  std::uint64_t seq = 0;
};
// `SEQ` or `GEN:SEQ` (GEN hex, 1 to kMaxGenLength digits; SEQ at most
// kMaxSeq). Errors: bad_field (anything else), with the message to answer.
Result<Cursor> parse_cursor(std::string_view text);
// Where a stream resumes for `cursor` in generation `gen`: its seq, or 0
// (from the first event) when the cursor names another generation.
std::uint64_t resume_after(const Cursor& cursor, const std::string& gen);

// The ordinal (1 first) of the latest attempt's last entry of `step` among
// all of `r`'s entries; nullopt: there is none.
std::optional<std::uint64_t> entry_ordinal(const journal::Record& r, journal::Step step);

// One numbered line (its text ends with a newline).
struct EventLine {
  std::uint64_t seq = 0;
  std::string text;
};
// The latest attempt's events as the journal tells them, numbered as the
// live stream numbered them, each line with `gen`.
std::vector<EventLine> journal_lines(const journal::Record& r, const std::string& gen);

}  // namespace courier::service
