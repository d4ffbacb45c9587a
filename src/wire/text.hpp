// text.hpp — making bytes the remote sent safe to show a person.
//
// Rejection reasons, fatal messages and malformed lines come from the remote
// and end up in terminals, logs and JSON. Escaping control bytes keeps a
// hostile or broken server from moving the cursor, clearing the screen or
// forging extra log lines; the length cap keeps one message from flooding.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace courier::wire {

inline constexpr std::size_t kMaxQuoted = 200;

// Bytes 0x20-0x7E are kept (backslash doubled); anything else becomes \xNN.
// Input beyond `max_len` bytes is cut and marked with "...".
std::string printable(std::string_view bytes, std::size_t max_len = kMaxQuoted);

// Text a server wrote (an error body, a rejection's reason, a hook's line),
// as git shows it: its trailing line ends (LF, CRLF) are the end of the
// text, not part of it, and a tab stays a tab; every other byte as
// printable() gives it (control bytes \xNN, a backslash doubled).
std::string server_text(std::string_view bytes, std::size_t max_len = kMaxQuoted);

// Text for a terminal, from anywhere (the child, a service's answers, a
// lock file): the one sanitiser of what the CLI writes to stderr. Every
// control character but a tab becomes '?': C0 and DEL (ESC, CR, BEL: a cursor move,
// a cleared screen, an OSC title or hyperlink, an overwritten line), C1
// (U+0080-U+009F, which some terminals obey as CSI and OSC), and any byte
// that is not part of valid UTF-8 (a lone 0x9B is CSI to an 8-bit
// terminal). Other UTF-8 and backslashes are kept, so text that
// printable() already escaped comes out unchanged.
std::string terminal_safe(std::string_view text);

// `line` without one trailing LF, if it has one. Text pkt-lines may end in LF
// or not; both mean the same line.
std::string_view chomp(std::string_view line);

}  // namespace courier::wire
