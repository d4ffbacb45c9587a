// fuzz_url.cpp — the wire leaf's URL parser and remote rules on arbitrary
// bytes. Oracles: nothing crashes; an accepted remote's canonical form
// carries no user information, parses again to itself (one spelling, one
// canonical form) and to the same lane; a redacted URL never shows the
// user information it was given.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "wire/remote.hpp"
#include "wire/url.hpp"

using namespace courier;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto url = wire::parse_url(text)) {
    // Taken apart and put back without user information, it parses alike.
    auto again = wire::parse_url(url->without_userinfo());
    if (!again || again->host != url->host || again->port != url->port || again->path != url->path ||
        again->query != url->query || again->userinfo) {
      std::abort();
    }
  }
  if (auto remote = wire::parse_remote(text)) {
    if (remote->url.userinfo) std::abort();
    auto again = wire::parse_remote(remote->canonical);
    if (!again || again->canonical != remote->canonical || again->lane != remote->lane) std::abort();
  }
  const std::string shown = wire::redact_url(text);
  for (char c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
  }
  return 0;
}
