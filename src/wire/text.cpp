// text.cpp — escaping remote text for display.
#include "wire/text.hpp"

#include "wire/hex.hpp"

namespace courier::wire {

namespace {

std::string escaped(std::string_view bytes, std::size_t max_len, bool keep_tab) {
  const bool cut = bytes.size() > max_len;
  if (cut) bytes = bytes.substr(0, max_len);
  std::string out;
  out.reserve(bytes.size() + 8);
  for (char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    if (ch == '\\') {
      out += "\\\\";
    } else if ((b >= 0x20 && b < 0x7F) || (keep_tab && ch == '\t')) {
      out += ch;
    } else {
      out += "\\x" + to_hex(std::string_view(&ch, 1));
    }
  }
  if (cut) out += "...";
  return out;
}

}  // namespace

std::string printable(std::string_view bytes, std::size_t max_len) { return escaped(bytes, max_len, false); }

std::string server_text(std::string_view bytes, std::size_t max_len) {
  while (!bytes.empty() && (bytes.back() == '\n' || bytes.back() == '\r')) bytes.remove_suffix(1);
  return escaped(bytes, max_len, true);
}

namespace {

// The length of the valid UTF-8 sequence at `at` (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), or 0.
std::size_t utf8_length(std::string_view s, std::size_t at) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = b(at);
  const std::size_t n = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  if (lead < 0xC2 || lead > 0xF4 || at + n > s.size()) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((b(at + i) & 0xC0) != 0x80) return 0;
  }
  const unsigned char second = b(at + 1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) || (lead == 0xF0 && second < 0x90) ||
      (lead == 0xF4 && second > 0x8F)) {
    return 0;
  }
  return n;
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out += (c < 0x20 && c != '\t') || c == 0x7F ? '?' : text[i];
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(text, i);
    // C1 controls are U+0080-U+009F: 0xC2 0x80 to 0xC2 0x9F.
    const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0;
    if (n == 0 || c1) {
      out += '?';
      i += n == 0 ? 1 : n;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

std::string_view chomp(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  return line;
}

}  // namespace courier::wire
