// ssh_wire.cpp — the SSH wire encoding (ssh_wire.hpp).
#include "agent/ssh_wire.hpp"

namespace courier::agent {

std::optional<std::string_view> SshReader::take(std::size_t n) {
  if (!ok_ || rest_.size() < n) {
    ok_ = false;
    return std::nullopt;
  }
  std::string_view out = rest_.substr(0, n);
  rest_.remove_prefix(n);
  return out;
}

std::optional<std::uint32_t> SshReader::u32() {
  auto b = take(4);
  if (!b) return std::nullopt;
  std::uint32_t v = 0;
  for (char c : *b) v = (v << 8) | static_cast<std::uint8_t>(c);
  return v;
}

std::optional<std::uint8_t> SshReader::byte() {
  auto b = take(1);
  if (!b) return std::nullopt;
  return static_cast<std::uint8_t>((*b)[0]);
}

std::optional<bool> SshReader::boolean() {
  auto b = byte();
  if (!b) return std::nullopt;
  return *b != 0;
}

std::optional<std::string_view> SshReader::string() {
  auto n = u32();
  if (!n) return std::nullopt;
  return take(*n);
}

std::optional<std::string_view> SshReader::mpint() {
  auto s = string();
  if (!s) return std::nullopt;
  if (!s->empty() && (static_cast<std::uint8_t>((*s)[0]) & 0x80) != 0) {
    ok_ = false;
    return std::nullopt;
  }
  while (!s->empty() && (*s)[0] == '\0') s->remove_prefix(1);
  return s;
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

void put_string(std::string& out, std::string_view s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}

void put_mpint(std::string& out, std::string_view magnitude) {
  while (!magnitude.empty() && magnitude[0] == '\0') magnitude.remove_prefix(1);
  const bool high = !magnitude.empty() && (static_cast<std::uint8_t>(magnitude[0]) & 0x80) != 0;
  put_u32(out, static_cast<std::uint32_t>(magnitude.size() + (high ? 1 : 0)));
  if (high) out.push_back('\0');
  out.append(magnitude);
}

}  // namespace courier::agent
