// minter.hpp — credential custody in the parent: what a minter is, which
// request a token may be minted for (leg binding, rule A2), and the gate
// that decides whether to mint at all (A2, A3) before any header can reach
// the child's pipe.
//
// The child asks for one header per HTTP request ("leg"). The parent checks
// that the request is exactly one of this delivery's two legs — the
// advertisement GET or the receive-pack POST of this delivery's remote —
// that the delivery is authenticated, before its deadline, under the mint
// cap and still owns its turn; only then does the minter run, and the
// authority is asked again afterwards so that a token minted for a delivery
// revoked meanwhile is dropped here, never written to the pipe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "courier/host_api.hpp"
#include "courier/result.hpp"
#include "sys/clock.hpp"
#include "wire/legs.hpp"
#include "wire/url.hpp"

namespace courier::auth {

inline constexpr std::string_view kDefaultIssuer = "git-courier";
inline constexpr std::chrono::seconds kDefaultTokenTtl{60};

// What a delivery's minter knows about the delivery.
struct MintContext {
  std::string remote;                           // the delivery's remote URL
  std::string repo;                             // the delivery's repository (its configuration: git credential)
  std::string ref;                              // the target ref
  std::string oid;                              // the gated object id
  sys::MonoNs deadline = 0;                     // absolute CLOCK_MONOTONIC deadline (D1)
  std::string issuer{kDefaultIssuer};           // the node id: the token's `iss`
  std::chrono::seconds ttl = kDefaultTokenTtl;  // token lifetime, capped by the deadline
};

// One leg, after the gate has checked its binding.
struct LegRequest {
  MintContext context;
  std::string leg;     // a wire::kLegs name
  std::string method;  // GET | POST
  std::string url;     // the exact URL the child will request
  // Lower-case hex SHA-256 of the whole POST body (the child reports it in
  // its mint request); absent for the GET.
  std::optional<std::string> body_sha256_hex;
  // The fence of the lane's lease (MintRequest::fence, L3); absent: none.
  std::optional<std::int64_t> fence;
};

// Makes one authorization header per leg. Implementations run in the parent
// only and must be safe to call from a worker thread other than the one that
// created them.
class Minter {
 public:
  virtual ~Minter() = default;
  // The whole header line, e.g. "Authorization: Bearer <token>". An error is
  // a refusal; its message says why and is passed on to the child.
  virtual Result<std::string> mint(const LegRequest& request) = 0;
  // After the delivery's outcome is known: accepted = the remote took our
  // credentials (it answered past authentication); !accepted = it refused
  // them (401/403). Minters with a credential store (git credential) tell
  // it; the others ignore this.
  virtual Result<void> settle(bool /*accepted*/) { return {}; }
  // Whether the header binds the POST's body (the Ed25519 token's `ph`
  // claim): then the child must know the body's SHA-256 before the POST, so
  // it spools the pack, and the gate refuses a POST mint without the hash.
  // A minter whose header does not depend on the body (a bearer token, a
  // git credential) says false, and the pack may stream into the POST as it
  // is built. True by default: a minter that does not say is assumed to
  // bind, which costs speed, never the binding.
  virtual bool binds_payload() const { return true; }
  // Whether the minter is asked only after the remote refused an
  // unauthenticated advertisement GET with 401, as git asks its credential
  // helpers (T2; DeliveryRequest::mint_after_challenge). False by default:
  // every leg carries a minted header.
  virtual bool after_challenge() const { return false; }
};

// ---- leg binding (A2) ------------------------------------------------------

// Leg URLs come from the one table (wire::leg_url); request URLs are taken
// apart by the one parser (wire::parse_url).

enum class BindingVerdict {
  ok,       // exactly one of this delivery's two legs
  refused,  // this delivery's repository, but not a leg we mint for (wrong leg, method, service, path)
  foreign,  // another destination: scheme, host, port, user information, or outside the repository path
};

struct Binding {
  BindingVerdict verdict = BindingVerdict::refused;
  std::string reason;     // when not ok
  std::string canonical;  // when ok: the URL in canonical form
};

// Pure. Accepts only
//   leg "advertisement", GET,  URL = wire::leg_url(remote, advertisement), no body hash
//   leg "receive-pack",  POST, URL = wire::leg_url(remote, receive_pack), body_sha256 = 64 lower-case hex
//                                  (optional when !body_hash_required: a streamed body has no hash
//                                  before it is sent; one that is given must still be well formed)
// comparing parsed URLs: scheme and host case-insensitively, the port with
// its default filled in, user information exactly as the remote has it
// (normally none), path and query exactly (case-sensitive, no
// normalisation of percent-escapes; a "." or ".." segment is foreign).
Binding check_leg_binding(std::string_view remote, const MintRequest& request, bool body_hash_required = true);

// ---- the gate --------------------------------------------------------------

using courier::AuthorityFn;

struct MintGateOptions {
  // The job says the delivery carries credentials. False: every request is refused.
  bool authenticated = true;
  // At most this many mint requests per delivery (counted whether or not a
  // token results).
  int max_mints = wire::kMaxMints;
  // Tests may move time; default sys::mono_now_ns.
  std::function<sys::MonoNs()> mono_clock;
};

// The parent-side policy for one delivery. Thread-safe; the minter itself is
// called without any lock held (it may block).
class MintGate {
 public:
  // minter may be null (no credentials: every request is refused).
  // authority may be null (always holds).
  MintGate(std::shared_ptr<Minter> minter, MintContext context, AuthorityFn authority, MintGateOptions options = {});

  // In order: authenticated; leg binding (a foreign destination answers
  // foreign = true, a protocol fault); the mint cap; the deadline; authority
  // ("mint"); the minter; the deadline again; authority again (A3). An
  // authority refusal at either point answers revoked = true, and no header.
  MintAnswer answer(const MintRequest& request);

  int requests() const { return requests_.load(); }
  int minted() const { return minted_.load(); }

 private:
  std::shared_ptr<Minter> minter_;
  MintContext context_;
  AuthorityFn authority_;
  MintGateOptions options_;
  std::atomic<int> requests_{0};
  std::atomic<int> minted_{0};
};

// The callable DeliveryRequest::mint (and SupervisorOptions::mint) expects,
// backed by one MintGate for one delivery.
MintFn make_mint_callback(std::shared_ptr<Minter> minter, MintContext context, AuthorityFn authority,
                          MintGateOptions options = {});

}  // namespace courier::auth
