// ssh_text.cpp — SSH keys as text (ssh_text.hpp).
#include "agent/ssh_text.hpp"

#include <openssl/evp.h>

#include <climits>

#include "agent/ssh_wire.hpp"
#include "wire/digest.hpp"

namespace courier::agent {

std::string base64_encode(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0 || text.size() > INT_MAX / 2) return std::nullopt;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    const bool pad = c == '=' && i + 2 >= text.size() && (i + 1 == text.size() || text[i + 1] == '=');
    if (!alnum && c != '+' && c != '/' && !pad) return std::nullopt;
  }
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  std::size_t len = static_cast<std::size_t>(n);
  if (text.size() >= 1 && text.back() == '=') --len;
  if (text.size() >= 2 && text[text.size() - 2] == '=') --len;
  out.resize(len);
  return out;
}

std::string blob_algorithm(std::string_view blob) {
  SshReader r(blob);
  auto alg = r.string();
  return alg ? std::string(*alg) : std::string();
}

std::string public_line_of(std::string_view blob) { return blob_algorithm(blob) + " " + base64_encode(blob); }

std::string fingerprint_of(std::string_view blob) {
  std::string b64 = base64_encode(wire::sha256(blob));
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  return "SHA256:" + b64;
}

}  // namespace courier::agent
