// bearer_minter.cpp — a static bearer token from a file.
#include "auth/bearer_minter.hpp"

#include <cctype>

#include "auth/crypto.hpp"
#include "sys/small_file.hpp"

namespace courier::auth {

Result<std::string> read_bearer_token(const std::string& path) {
  auto bad = [&](const std::string& why) {
    return fail(Errc::invalid_argument, "bearer token file " + path + ": " + why);
  };
  // Never blocks (a FIFO), never grows without bound (/dev/zero), never
  // follows a symbolic link: see read_small_regular_file.
  auto file = sys::read_small_regular_file(path, sys::kMaxSecretFile);
  if (!file) return bad(file.error().message);
  std::string text = std::move(file->bytes);
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; };
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && space(text[begin])) ++begin;
  while (end > begin && space(text[end - 1])) --end;
  std::string token = text.substr(begin, end - begin);
  wipe(text);
  if (token.empty()) return bad("is empty");
  // Visible ASCII only: anything else could end the header line early or
  // be mangled on the way (RFC 6750 tokens are a subset of this).
  for (char c : token) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x21 || b > 0x7e) {
      wipe(token);
      return bad("the token contains whitespace, control or non-ASCII characters");
    }
  }
  return token;
}

BearerMinter::BearerMinter(std::string token) : token_(std::move(token)) {}

BearerMinter::~BearerMinter() { wipe(token_); }

Result<std::string> BearerMinter::mint(const LegRequest&) { return "Authorization: Bearer " + token_; }

}  // namespace courier::auth
