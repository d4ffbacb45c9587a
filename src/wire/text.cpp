// text.cpp — escaping remote text for display.
#include "wire/text.hpp"

namespace courier::wire {

std::string printable(std::string_view bytes, std::size_t max_len) {
  static constexpr char kHex[] = "0123456789abcdef";
  const bool cut = bytes.size() > max_len;
  if (cut) bytes = bytes.substr(0, max_len);
  std::string out;
  out.reserve(bytes.size() + 8);
  for (char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    if (ch == '\\') {
      out += "\\\\";
    } else if (b >= 0x20 && b < 0x7F) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0x0F];
    }
  }
  if (cut) out += "...";
  return out;
}

std::string_view chomp(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  return line;
}

}  // namespace courier::wire
