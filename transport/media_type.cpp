// media_type.cpp — Content-Type matching.
#include "transport/media_type.hpp"

#include <string>

#include "wire/text.hpp"

namespace courier::transport {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool media_type_is(std::string_view header_value, std::string_view expected) {
  const std::string_view type = trim(header_value.substr(0, header_value.find(';')));
  if (type.size() != expected.size()) return false;
  for (std::size_t i = 0; i < type.size(); ++i) {
    if (lower(type[i]) != lower(expected[i])) return false;
  }
  return true;
}

Result<void> expect_media_type(std::string_view header_value, std::string_view expected, std::string_view what) {
  if (media_type_is(header_value, expected)) return {};
  return fail(Errc::bad_content_type, std::string(what) + " has Content-Type \"" + wire::printable(header_value) +
                                          "\", expected " + std::string(expected) +
                                          " (is the URL a smart-HTTP git remote?)");
}

}  // namespace courier::transport
