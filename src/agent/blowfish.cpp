// blowfish.cpp — the Blowfish steps bcrypt_pbkdf needs (blowfish.hpp),
// after OpenBSD's blowfish.c (Niels Provos, BSD licence).
#include <openssl/crypto.h>

#include <algorithm>

#include "agent/blowfish.hpp"

namespace courier::agent {

namespace {

// Four bytes of `data` as one big-endian word, wrapping around its end.
std::uint32_t stream_word(std::string_view data, std::size_t& at) {
  std::uint32_t w = 0;
  for (int i = 0; i < 4; ++i) {
    if (at >= data.size()) at = 0;
    w = (w << 8) | static_cast<std::uint8_t>(data[at++]);
  }
  return w;
}

}  // namespace

BlowfishState::BlowfishState() {
  std::copy(std::begin(kBlowfishPiS), std::end(kBlowfishPiS), s);
  std::copy(std::begin(kBlowfishPiP), std::end(kBlowfishPiP), p);
}

BlowfishState::~BlowfishState() {
  OPENSSL_cleanse(s, sizeof s);
  OPENSSL_cleanse(p, sizeof p);
}

void BlowfishState::encipher(std::uint32_t& l, std::uint32_t& r) const {
  auto f = [this](std::uint32_t x) {
    return ((s[(x >> 24) & 0xFF] + s[0x100 + ((x >> 16) & 0xFF)]) ^ s[0x200 + ((x >> 8) & 0xFF)]) +
           s[0x300 + (x & 0xFF)];
  };
  std::uint32_t xl = l ^ p[0];
  std::uint32_t xr = r;
  for (int i = 1; i <= 16; i += 2) {
    xr ^= f(xl) ^ p[i];
    xl ^= f(xr) ^ p[i + 1];
  }
  l = xr ^ p[17];
  r = xl;
}

void BlowfishState::expand(std::string_view data, std::string_view key) {
  std::size_t j = 0;
  for (auto& w : p) w ^= stream_word(key, j);
  j = 0;
  std::uint32_t l = 0;
  std::uint32_t r = 0;
  for (int i = 0; i < 18; i += 2) {
    l ^= stream_word(data, j);
    r ^= stream_word(data, j);
    encipher(l, r);
    p[i] = l;
    p[i + 1] = r;
  }
  for (int i = 0; i < 4 * 256; i += 2) {
    l ^= stream_word(data, j);
    r ^= stream_word(data, j);
    encipher(l, r);
    s[i] = l;
    s[i + 1] = r;
  }
}

void BlowfishState::expand0(std::string_view key) {
  std::size_t j = 0;
  for (auto& w : p) w ^= stream_word(key, j);
  std::uint32_t l = 0;
  std::uint32_t r = 0;
  for (int i = 0; i < 18; i += 2) {
    encipher(l, r);
    p[i] = l;
    p[i + 1] = r;
  }
  for (int i = 0; i < 4 * 256; i += 2) {
    encipher(l, r);
    s[i] = l;
    s[i + 1] = r;
  }
}

}  // namespace courier::agent
