// legs.hpp — the two HTTP requests ("legs") of a smart-HTTP push, as one
// table: which method, which URL under the remote, which media types. The
// child requests them, the minter binds tokens to them, the verifier checks
// them; all three read this table.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace courier::wire {

enum class Leg { advertisement, receive_pack };

struct LegSpec {
  Leg leg;
  std::string_view name;           // the word in mint frames
  std::string_view method;         // GET | POST
  std::string_view path_suffix;    // appended to the remote's path
  std::string_view query;          // "" when none
  std::string_view request_type;   // Content-Type of the body ("" for none)
  std::string_view response_type;  // the Content-Type the answer must carry
};

inline constexpr LegSpec kLegs[] = {
    {Leg::advertisement, "advertisement", "GET", "/info/refs", "service=git-receive-pack", "",
     "application/x-git-receive-pack-advertisement"},
    {Leg::receive_pack, "receive-pack", "POST", "/git-receive-pack", "", "application/x-git-receive-pack-request",
     "application/x-git-receive-pack-result"},
};

// At most this many tokens are asked for in one delivery (both legs, with
// retries after a 401 included); more is a protocol fault (P1).
inline constexpr int kMaxMints = 8;

constexpr const LegSpec& leg_spec(Leg leg) {
  for (const auto& spec : kLegs) {
    if (spec.leg == leg) return spec;
  }
  return kLegs[0];  // unreachable: kLegs has a row for every Leg
}
// The leg a mint frame names. nullptr: no such leg.
const LegSpec* find_leg(std::string_view name);

// The exact URL of a leg of a remote: the remote's trailing "/"s dropped,
// then the suffix (and query) appended, so https://h/r.git, https://h/r.git/
// and https://h/r.git// all give https://h/r.git/info/refs?service=git-receive-pack.
std::string leg_url(std::string_view remote, Leg leg);

// The inverse, for a verifier: the remote (origin and repository path, no
// user information) whose leg `url` is, or nullopt when it is no leg URL
// (a path without a leg's suffix, or a query other than the leg's).
std::optional<std::string> leg_remote(std::string_view url);

}  // namespace courier::wire
