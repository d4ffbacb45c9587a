// oid.hpp — object ids as they appear on the wire: 40 lowercase hex digits.
//
// git-courier speaks sha1 repositories only (an advertisement announcing any
// other object-format is refused), so an id is exactly 40 characters. Only
// lowercase is accepted because git never writes uppercase ids, and exact
// byte comparison of ids (T4) must not be fooled by case.
#pragma once

#include <cstddef>
#include <string_view>

namespace courier::transport {

inline constexpr std::size_t kOidHexLength = 40;
inline constexpr std::string_view kZeroOid = "0000000000000000000000000000000000000000";

// True when `s` is 40 characters of [0-9a-f].
bool is_valid_oid(std::string_view s);

// True for the all-zero id, which means "no object" (a ref that does not exist).
inline bool is_zero_oid(std::string_view s) { return s == kZeroOid; }

}  // namespace courier::transport
