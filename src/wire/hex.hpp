// hex.hpp — the one hex codec: bytes and numbers to hex digits and back.
// Digests, token hashes, delivery ids, lane file names, pkt-line lengths,
// percent-escapes and escaped display bytes all spell hex here, so a digit
// table exists once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "courier/result.hpp"

namespace courier::wire {

enum class HexCase {
  lower,  // written: 0-9a-f; read: only those (digests, token hashes)
  any,    // written: never; read: 0-9a-f and A-F (pkt-line lengths, as git reads them)
  upper,  // written: 0-9A-F (percent-escapes, RFC 3986 §2.1); read: as any
};

// Two digits per byte, most significant first.
std::string to_hex(std::string_view bytes, HexCase digits = HexCase::lower);

// `value` in exactly `width` digits (1 to 16), most significant first; digits
// beyond the width are cut (a pkt-line length, a hash's low bits).
std::string to_hex(std::uint64_t value, std::size_t width, HexCase digits = HexCase::lower);

// The value of one hex digit of either case, or -1.
int hex_digit_value(char c);

// Every character is a hex digit of the case given (empty text: true).
bool is_hex(std::string_view text, HexCase digits = HexCase::lower);

// The bytes an even number of digits spell. Errors: invalid_value (odd
// length, or a character that is not a digit of the case given).
Result<std::string> from_hex(std::string_view hex, HexCase digits = HexCase::lower);

}  // namespace courier::wire
