// host_api.hpp — (public) what a host hands a delivery and answers it: the
// mint and authority callbacks with their request and answer types, the
// kill-domain choice, and the confirmation bounds. The minters in src/auth/
// build on this header and on nothing else of the parent side.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "courier/outcome.hpp"

namespace courier {

// One HTTP request ("leg") the child asks a credential for.
struct MintRequest {
  std::string leg;     // "advertisement" | "receive-pack"
  std::string method;  // GET | POST
  std::string url;     // the exact URL the child will request
  // Lower-case hex SHA-256 of the whole POST body, and its length; absent
  // for the GET.
  std::optional<std::string> body_sha256;
  std::optional<std::uint64_t> body_len;
  // The fence of the lane's lease this delivery holds (L3): strictly
  // increasing per lane across hosts. A minter puts it in its credential
  // (the Ed25519 token's `fence` claim) so that a verifier can refuse a
  // holder whose lease was taken over. Absent: no lease.
  std::optional<std::int64_t> fence;
};

struct MintAnswer {
  std::optional<std::string> header;  // the token header, or
  std::string refused;                // why none was minted
  // The child asked for a token for another destination than this
  // delivery's remote: a protocol fault (P1), not a refusal.
  bool foreign = false;
  // Authority said no, before or after minting: the delivery is revoked (A4).
  bool revoked = false;
};

struct AuthorityAnswer {
  bool ok = false;
  std::string reason;  // when !ok
};

// Credentials (A1-A3): called in the host process, once per HTTP request.
using MintFn = std::function<MintAnswer(const MintRequest&)>;
// "Does this delivery still own its turn?" Asked before each leg and after
// each mint; a refusal revokes.
using AuthorityFn = std::function<AuthorityAnswer(const std::string& phase)>;

// The kill domain: a cgroup of its own when available (automatic), never
// (off: process group only), or refuse to run without one (required).
enum class CgroupMode { automatic, off, required };

// Named bounds (docs/bounds.md). The seat is released no later than
// deadline + kill latency + kReapBound + kEofBound.
inline constexpr MonoNs kReapBound = 5'000'000'000;  // 5 s
inline constexpr MonoNs kEofBound = 5'000'000'000;   // 5 s
// J1: a live revocation's kill waits at most this long for its intent to
// be durable in the journal (REVOKE_JOURNAL_BOUND); past it the kill goes
// ahead and the outcome says the intent was not journalled.
inline constexpr MonoNs kRevokeJournalBound = 5'000'000;  // 5 ms
// A lane's lease across hosts (L1, L3; docs/design.md "Leases across
// hosts"): its time to live, renewed every ttl/3, and the margin taken off
// it by the holder (its kill instant) and added to it by the next holder.
// The margin covers a stop's confirmation (kReapBound + kEofBound) with
// room for clocks that run at slightly different rates.
inline constexpr MonoNs kLeaseTtl = 60'000'000'000;     // 60 s
inline constexpr MonoNs kLeaseMargin = 12'000'000'000;  // 12 s

}  // namespace courier
