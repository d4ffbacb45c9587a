// sideband_text.hpp — the remote's side-band 2 text cut into lines as git
// cuts it: a line ends at '\n' (a message: hook output, receive-pack's
// words) or at '\r' (a progress meter the next line replaces). Packets may
// split a line anywhere, or carry several; the splitter reassembles them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace courier::transport {

struct SidebandLine {
  std::string text;     // raw bytes of the line, without its terminator
  bool update = false;  // ended by '\r': a meter, replaced by the next line
  bool operator==(const SidebandLine&) const = default;
};

class SidebandText {
 public:
  // The longest line kept, in bytes; a longer one is cut there (the rest
  // of it is dropped up to its terminator).
  explicit SidebandText(std::size_t max_line) : max_line_(max_line) {}

  // The lines completed by these bytes, in order.
  std::vector<SidebandLine> feed(std::string_view bytes);
  // What is left once the stream has ended: an unterminated last line, as
  // a message (none when nothing is pending).
  std::vector<SidebandLine> finish();

 private:
  std::size_t max_line_;
  std::string pending_;
};

}  // namespace courier::transport
