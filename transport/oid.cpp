// oid.cpp — validation of wire object ids.
#include "transport/oid.hpp"

namespace courier::transport {

bool is_valid_oid(std::string_view s) {
  if (s.size() != kOidHexLength) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace courier::transport
