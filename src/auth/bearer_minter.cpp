// bearer_minter.cpp — a static bearer token from a file.
#include "auth/bearer_minter.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "auth/crypto.hpp"

namespace courier::auth {

Result<std::string> read_bearer_token(const std::string& path) {
  auto bad = [&](const std::string& why) {
    return fail(Errc::invalid_argument, "bearer token file " + path + ": " + why);
  };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return bad("no such file");
  if (std::filesystem::is_directory(status)) return bad("is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad("cannot be read (permissions?)");
  std::ostringstream s;
  s << in.rdbuf();
  std::string text = s.str();
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
