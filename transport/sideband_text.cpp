// sideband_text.cpp — side-band 2 text into lines (see the header).
#include "transport/sideband_text.hpp"

namespace courier::transport {

std::vector<SidebandLine> SidebandText::feed(std::string_view bytes) {
  std::vector<SidebandLine> out;
  for (char c : bytes) {
    if (c == '\n' || c == '\r') {
      out.push_back(SidebandLine{std::move(pending_), c == '\r'});
      pending_.clear();
    } else if (pending_.size() < max_line_) {
      pending_.push_back(c);
    }
  }
  return out;
}

std::vector<SidebandLine> SidebandText::finish() {
  std::vector<SidebandLine> out;
  if (!pending_.empty()) out.push_back(SidebandLine{std::move(pending_), false});
  pending_.clear();
  return out;
}

}  // namespace courier::transport
