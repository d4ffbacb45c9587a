// shell_quote.cpp — git's sq_quote, byte for byte (see shell_quote.hpp).
#include "wire/shell_quote.hpp"

namespace courier::wire {

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'' || c == '!') {
      out += "'\\";
      out.push_back(c);
      out.push_back('\'');
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

}  // namespace courier::wire
