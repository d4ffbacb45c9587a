// oid.cpp — validation of wire object ids.
#include "transport/oid.hpp"

#include "wire/hex.hpp"

namespace courier::transport {

bool is_valid_oid(std::string_view s) { return s.size() == kOidHexLength && wire::is_hex(s, wire::HexCase::lower); }

}  // namespace courier::transport
