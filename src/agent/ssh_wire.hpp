// ssh_wire.hpp — the SSH wire encoding (RFC 4251 5): uint32, string, mpint,
// byte and boolean, read from untrusted bytes with every length checked,
// and written. Key files, agent messages and signatures all use it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace courier::agent {

// Reads fields in order; a read past the end returns nullopt and leaves the
// reader failed (every later read fails too), so a caller may read a whole
// message and check once.
class SshReader {
 public:
  explicit SshReader(std::string_view bytes) : rest_(bytes) {}
  std::optional<std::uint32_t> u32();
  std::optional<std::uint8_t> byte();
  std::optional<bool> boolean();
  std::optional<std::string_view> string();
  // An mpint's magnitude, big-endian, without the sign byte; a negative
  // value fails (no key or signature holds one).
  std::optional<std::string_view> mpint();
  std::optional<std::string_view> take(std::size_t n);
  std::string_view rest() const { return rest_; }
  bool empty() const { return rest_.empty(); }
  bool ok() const { return ok_; }

 private:
  std::string_view rest_;
  bool ok_ = true;
};

void put_u32(std::string& out, std::uint32_t v);
void put_string(std::string& out, std::string_view s);
// `magnitude`: unsigned big-endian bytes; leading zeros are dropped and a
// zero byte is put before a high bit, as RFC 4251 spells a positive mpint.
void put_mpint(std::string& out, std::string_view magnitude);

}  // namespace courier::agent
