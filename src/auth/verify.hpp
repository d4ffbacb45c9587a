// verify.hpp — the receiving side of a git-courier token: what a server (or
// a proxy in front of it) checks before it lets a leg through. The tests and
// the fixture server use it; it is also the reference for docs/auth.md.
//
// A token is accepted only if its signature verifies under a trusted key
// named by its kid, it is an EdDSA git-courier token, it has not expired and
// was not issued in the future (both within a small leeway), its htm and htu
// are exactly the request's method and URL, its aud is the request's origin,
// a POST's body hash equals its ph, and its jti has not been seen before
// within the token's lifetime. Every refusal is a value naming what failed.
//
// With a fence store (L3), a token's `fence` must be at least the highest
// fence seen for its repository: a delivery whose lane lease was taken over
// by another host (a higher fence) is refused, whichever of its legs it is.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "courier/result.hpp"

namespace courier::auth {

inline constexpr std::int64_t kMaxLeewaySeconds = 5;
inline constexpr std::size_t kMaxTokenBytes = 8 * 1024;

struct PublicKey {
  std::string raw;  // 32 bytes
  std::string kid;  // its JWK thumbprint
};

// Errors: invalid_argument (not 32 bytes).
Result<PublicKey> public_key_from_raw(std::string_view raw);

// A trusted key from a file — a PEM public key, a PEM private key (its
// public half is used), or a file holding the base64url raw key — or, when
// no such file exists, the base64url raw key given as text.
// Errors: invalid_argument naming the problem (missing, unreadable, not
// Ed25519, malformed).
Result<PublicKey> load_public_key(const std::string& file_or_b64url);

// The kinds, once: the enum and its names are generated from this list.
#define COURIER_VERIFY_ERRC_LIST(X)                                                       \
  X(malformed)          /* not a compact JWS, bad base64url or JSON, wrong claim types */ \
  X(unsupported_alg)    /* alg is not EdDSA (alg "none" included) */                      \
  X(wrong_type)         /* typ is not git-courier+jwt */                                  \
  X(unknown_key)        /* kid names no trusted key */                                    \
  X(bad_signature)      /* the signature does not verify */                               \
  X(missing_claim)      /* a required claim is absent */                                  \
  X(expired)            /* now > exp + leeway */                                          \
  X(issued_in_future)   /* iat > now + leeway */                                          \
  X(lifetime_too_long)  /* exp - iat over the verifier's maximum */                       \
  X(wrong_issuer)       /* iss is not the expected issuer */                              \
  X(wrong_method)       /* htm != the request's method */                                 \
  X(wrong_url)          /* htu != the request's URL (canonical form) */                   \
  X(wrong_audience)     /* aud != the request's origin */                                 \
  X(body_hash_required) /* a POST token without ph, or a POST the server did not hash */  \
  X(body_hash_mismatch) /* ph != SHA-256 of the body */                                   \
  X(replayed)           /* jti seen before within its lifetime */                         \
  X(replay_cache_error) /* the replay cache could not record the jti (fail closed) */     \
  X(stale_fence)        /* fence lower than one already seen for the repository (L3) */   \
  X(fence_required)     /* no fence, and the verifier requires one */                     \
  X(fence_store_error)  /* the fence store could not be read or written (fail closed) */  \
  X(bad_request)        /* the request described to the verifier is itself unusable */

COURIER_WORD_ENUM(VerifyErrc, COURIER_VERIFY_ERRC_LIST);

const char* verify_errc_name(VerifyErrc code);

struct VerifyError {
  VerifyErrc code;
  std::string message;
};

template <class T>
using VerifyResult = tl::expected<T, VerifyError>;

// The request as the server received it.
struct VerifyRequest {
  std::string method;                          // GET | POST
  std::string url;                             // scheme://host[:port]/path[?query] as served
  std::optional<std::string> body_sha256_hex;  // SHA-256 of the request body, lower-case hex
  std::int64_t now_unix = 0;                   // the server's clock, seconds
};

struct VerifyOptions {
  std::int64_t leeway_s = 2;          // clock skew allowed on exp and iat; clamped to [0, kMaxLeewaySeconds]
  std::optional<std::string> issuer;  // when set, iss must equal it
  std::int64_t max_lifetime_s = 600;  // exp - iat at most this
  // L3: refuse a token without a `fence` claim (only with a fence store).
  bool require_fence = false;
};

struct TokenClaims {
  std::string kid;
  std::string iss;
  std::string aud;
  std::string htm;
  std::string htu;
  std::int64_t iat = 0;
  std::int64_t exp = 0;
  std::string jti;
  std::string ref;
  std::string oid;
  std::optional<std::string> ph;
  std::optional<std::int64_t> fence;  // the lane lease's fence (L3), when the token carries one
};

// The highest lease fence seen per repository (L3). A repository is a
// lane: every ref in it shares one fence, which is stricter than per ref.
class FenceStore {
 public:
  virtual ~FenceStore() = default;
  // In one atomic step: the highest fence recorded for `repository` before
  // (nullopt: none), and the record raised to `fence` if that is higher.
  // An error means the store could not be read or written; verify_token
  // then refuses (fail closed).
  virtual Result<std::optional<std::int64_t>> raise(const std::string& repository, std::int64_t fence) = 0;
};

// In memory, thread-safe: for a verifier that lives in one process.
class MemoryFenceStore : public FenceStore {
 public:
  Result<std::optional<std::int64_t>> raise(const std::string& repository, std::int64_t fence) override;

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::int64_t> highest_;
};

// The repository a token's fence is kept under: the lane key
// (wire::lane_key) of the remote whose leg `htu` is. Errors: bad_request.
VerifyResult<std::string> fence_repository(const std::string& htu);

// Remembers token ids until they can no longer be accepted anyway.
class ReplayCache {
 public:
  virtual ~ReplayCache() = default;
  // Records jti until forget_at (Unix seconds). True: first sighting; false:
  // seen before. An error means it could not be recorded; verify_token then
  // refuses (fail closed).
  virtual Result<bool> remember(const std::string& jti, std::int64_t forget_at, std::int64_t now_unix) = 0;
};

// In-memory, thread-safe, bounded. Entries are forgotten once their
// forget_at has passed; when `capacity` live entries are held, new ones are
// refused rather than old ones evicted (evicting a live entry would let its
// token be replayed).
class MemoryReplayCache : public ReplayCache {
 public:
  explicit MemoryReplayCache(std::size_t capacity = 100'000) : capacity_(capacity) {}
  Result<bool> remember(const std::string& jti, std::int64_t forget_at, std::int64_t now_unix) override;
  std::size_t size() const;

 private:
  void purge(std::int64_t now_unix);
  std::size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::int64_t> entries_;
  std::multimap<std::int64_t, std::string> by_expiry_;
};

// The token from an Authorization header value "Bearer <token>" (scheme
// case-insensitive); nullopt for anything else.
std::optional<std::string> bearer_token(std::string_view authorization_value);

// Verifies one token for one request. The jti is recorded only when every
// other check passed, so a refused token does not fill the cache.
VerifyResult<TokenClaims> verify_token(std::string_view token, const VerifyRequest& request,
                                       const std::vector<PublicKey>& trusted, ReplayCache& replay,
                                       const VerifyOptions& options = {});

// The same, and then the fence (L3): a token whose `fence` is lower than
// the highest one `fences` has seen for its repository is refused
// (stale_fence, naming both fences); an accepted fence raises the record.
// A token without a fence is accepted unless options.require_fence.
VerifyResult<TokenClaims> verify_token(std::string_view token, const VerifyRequest& request,
                                       const std::vector<PublicKey>& trusted, ReplayCache& replay, FenceStore& fences,
                                       const VerifyOptions& options = {});

}  // namespace courier::auth
