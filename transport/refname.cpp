// refname.cpp — git's check-ref-format rules for push targets.
#include "transport/refname.hpp"

namespace courier::transport {
namespace {

bool bad_byte(char ch) {
  const auto b = static_cast<unsigned char>(ch);
  if (b < 0x20 || b == 0x7F) return true;
  switch (ch) {
    case ' ':
    case '~':
    case '^':
    case ':':
    case '?':
    case '*':
    case '[':
    case '\\':
      return true;
    default:
      return false;
  }
}

bool valid_component(std::string_view c) {
  if (c.empty() || c.front() == '.') return false;
  if (c.size() >= 5 && c.substr(c.size() - 5) == ".lock") return false;
  return true;
}

}  // namespace

bool is_valid_push_refname(std::string_view name) {
  constexpr std::string_view kPrefix = "refs/";
  if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) return false;
  if (name.back() == '.' || name.back() == '/') return false;
  if (name.find("..") != std::string_view::npos) return false;
  if (name.find("@{") != std::string_view::npos) return false;
  for (char ch : name) {
    if (bad_byte(ch)) return false;
  }
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t slash = name.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? name.size() : slash;
    if (!valid_component(name.substr(start, end - start))) return false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

}  // namespace courier::transport
