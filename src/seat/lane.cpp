// lane.cpp — the file name of a lane's cross-process lock.
#include "seat/lane.hpp"

#include <cctype>
#include <cstdint>

#include "wire/hex.hpp"

namespace courier::seat {

std::string lane_lock_name(const std::string& key) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  std::string readable;
  for (char c : key) {
    readable.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    if (readable.size() >= 80) break;
  }
  return readable + "-" + wire::to_hex(h, 16) + ".lock";
}

}  // namespace courier::seat
