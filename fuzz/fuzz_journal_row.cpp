// fuzz_journal_row.cpp — libFuzzer target: arbitrary bytes as an entry's
// detail in the journal (a row of a shared database is written by whoever
// can write that database), read by every reader the journal has: the
// outcome codec, a text or flag field, the note, a host's note checked at
// submit. Oracles: nothing crashes or throws; an outcome read from a row
// writes back to a row that reads as the same outcome; a note is always
// an object that compact_note accepts again unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "journal/journal.hpp"

using namespace courier;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view detail(reinterpret_cast<const char*>(data), size);
  if (auto o = journal::outcome_from_detail(detail)) {
    auto again = journal::outcome_from_detail(journal::outcome_detail(*o));
    if (!again || again->kind != o->kind || again->remote_effect != o->remote_effect) std::abort();
  }
  (void)journal::detail_text(detail, "remote_effect");
  (void)journal::detail_flag(detail, "claimed");
  const std::string note = journal::note_of_detail(detail);
  if (!note.empty()) {
    auto compact = journal::compact_note(note, 1 << 20);
    if (compact && *compact != note) std::abort();
  }
  (void)journal::compact_note(detail, 64 * 1024);
  return 0;
}
