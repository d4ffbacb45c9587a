// hex.cpp — the hex codec (see the header).
#include "wire/hex.hpp"

namespace courier::wire {

namespace {

constexpr char kLowerDigits[] = "0123456789abcdef";
constexpr char kUpperDigits[] = "0123456789ABCDEF";

const char* digits_for(HexCase c) { return c == HexCase::upper ? kUpperDigits : kLowerDigits; }

// The digit's value if `c` is a digit of the case given, else -1.
int digit_value(char c, HexCase digits) {
  const int v = hex_digit_value(c);
  if (digits == HexCase::lower && c >= 'A' && c <= 'F') return -1;
  return v;
}

}  // namespace

std::string to_hex(std::string_view bytes, HexCase digits) {
  const char* table = digits_for(digits);
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(table[b >> 4]);
    out.push_back(table[b & 0x0F]);
  }
  return out;
}

std::string to_hex(std::uint64_t value, std::size_t width, HexCase digits) {
  const char* table = digits_for(digits);
  if (width > 16) width = 16;
  std::string out(width, '0');
  for (std::size_t i = width; i > 0; --i, value >>= 4) out[i - 1] = table[value & 0x0F];
  return out;
}

int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_hex(std::string_view text, HexCase digits) {
  for (char c : text) {
    if (digit_value(c, digits) < 0) return false;
  }
  return true;
}

Result<std::string> from_hex(std::string_view hex, HexCase digits) {
  if (hex.size() % 2 != 0) return fail(Errc::invalid_value, "hex: odd length");
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = digit_value(hex[i], digits);
    const int lo = digit_value(hex[i + 1], digits);
    if (hi < 0 || lo < 0) {
      return fail(Errc::invalid_value,
                  digits == HexCase::lower ? "hex: not a lower-case hex digit" : "hex: not a hex digit");
    }
    out.push_back(static_cast<char>((hi << 4) | lo));
  }
  return out;
}

}  // namespace courier::wire
