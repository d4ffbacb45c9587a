// verify.cpp — token verification and the in-memory replay cache.
#include "auth/verify.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "auth/crypto.hpp"
#include "auth/ed25519_minter.hpp"
#include "auth/minter.hpp"
#include "courier/words.hpp"
#include "wire/json.hpp"
#include "wire/legs.hpp"
#include "wire/remote.hpp"

namespace courier::auth {

namespace fs = std::filesystem;

namespace {

tl::unexpected<VerifyError> refuse(VerifyErrc code, std::string message) {
  return tl::unexpected(VerifyError{code, std::move(message)});
}

std::string trim(std::string s) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.back())) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && space(s[i])) ++i;
  return s.substr(i);
}

bool verify_signature(const std::string& public_raw, std::string_view message, std::string_view signature) {
  std::unique_ptr<EVP_PKEY, PkeyFree> pkey(EVP_PKEY_new_raw_public_key(
      EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(public_raw.data()), public_raw.size()));
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  bool ok = pkey && ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) == 1 &&
            EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                             reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  // A failed verification leaves reasons on the thread's error queue;
  // they are not errors of ours.
  discard_openssl_errors();
  return ok;
}

// A JSON object from one base64url part of the token.
VerifyResult<nlohmann::json> decode_part(std::string_view part, const char* name) {
  auto bytes = base64url_decode(part);
  if (!bytes) return refuse(VerifyErrc::malformed, std::string("token ") + name + ": " + bytes.error().message);
  // The one bounded reader: a claim given twice is refused, not resolved.
  auto j = wire::parse_json(*bytes, std::string("token ") + name);
  if (!j) return refuse(VerifyErrc::malformed, j.error().message);
  if (!j->is_object()) return refuse(VerifyErrc::malformed, std::string("token ") + name + " is not a JSON object");
  return std::move(*j);
}

VerifyResult<std::string> string_claim(const nlohmann::json& claims, const char* name) {
  const auto it = claims.find(name);
  if (it == claims.end()) return refuse(VerifyErrc::missing_claim, std::string("claim '") + name + "' is missing");
  if (!it->is_string()) return refuse(VerifyErrc::malformed, std::string("claim '") + name + "' is not a string");
  return it->get<std::string>();
}

VerifyResult<std::int64_t> time_claim(const nlohmann::json& claims, const char* name) {
  const auto it = claims.find(name);
  if (it == claims.end()) return refuse(VerifyErrc::missing_claim, std::string("claim '") + name + "' is missing");
  if (!it->is_number_integer()) {
    return refuse(VerifyErrc::malformed, std::string("claim '") + name + "' is not an integer");
  }
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX / 2)) {
    return refuse(VerifyErrc::malformed, std::string("claim '") + name + "' is out of range");
  }
  const auto v = it->get<std::int64_t>();
  if (v < 0 || v > INT64_MAX / 2)
    return refuse(VerifyErrc::malformed, std::string("claim '") + name + "' is out of range");
  return v;
}

bool is_b64url_text(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

}  // namespace

const char* verify_errc_name(VerifyErrc code) { return enum_word(code).data(); }

// ---- keys ------------------------------------------------------------------------

Result<PublicKey> public_key_from_raw(std::string_view raw) {
  if (raw.size() != kEd25519KeyBytes) {
    return fail(Errc::invalid_argument, "an Ed25519 public key is 32 bytes, not " + std::to_string(raw.size()));
  }
  return PublicKey{std::string(raw), jwk_thumbprint(raw)};
}

Result<PublicKey> load_public_key(const std::string& file_or_b64url) {
  std::error_code ec;
  std::string text;
  std::string what = "public key";
  if (fs::exists(file_or_b64url, ec)) {
    what = "public key file " + file_or_b64url;
    std::ifstream in(file_or_b64url, std::ios::binary);
    if (!in) return fail(Errc::invalid_argument, what + ": cannot be read");
    std::ostringstream s;
    s << in.rdbuf();
    text = trim(s.str());
  } else if (!is_b64url_text(file_or_b64url)) {
    return fail(Errc::invalid_argument, "public key file " + file_or_b64url + ": no such file");
  } else {
    text = trim(file_or_b64url);
  }

  if (text.rfind("-----BEGIN ", 0) == 0) {
    if (text.find("-----BEGIN PUBLIC KEY-----") != 0) {
      // A private key: its public half is what a verifier trusts.
      auto priv = Ed25519Key::from_pem(text, "in " + what);
      wipe(text);
      if (!priv) return tl::unexpected(priv.error());
      return public_key_from_raw(priv->public_raw());
    }
    std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
    std::unique_ptr<EVP_PKEY, PkeyFree> pkey(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr);
    if (!pkey) return fail(Errc::invalid_argument, what + ": " + openssl_error("not a PEM public key").message);
    if (EVP_PKEY_get_id(pkey.get()) != EVP_PKEY_ED25519) {
      const char* name = EVP_PKEY_get0_type_name(pkey.get());
      return fail(Errc::invalid_argument,
                  what + ": a " + std::string(name ? name : "non-Ed25519") + " key, not Ed25519");
    }
    std::array<unsigned char, kEd25519KeyBytes> raw{};
    std::size_t len = raw.size();
    if (EVP_PKEY_get_raw_public_key(pkey.get(), raw.data(), &len) != 1) {
      return tl::unexpected(openssl_error(what + ": EVP_PKEY_get_raw_public_key"));
    }
    return public_key_from_raw(std::string_view(reinterpret_cast<const char*>(raw.data()), len));
  }
  auto raw = base64url_decode(text);
  if (!raw) return fail(Errc::invalid_argument, what + ": neither PEM nor base64url (" + raw.error().message + ")");
  auto key = public_key_from_raw(*raw);
  if (!key) return fail(Errc::invalid_argument, what + ": " + key.error().message);
  return key;
}

// ---- replay cache ----------------------------------------------------------------

void MemoryReplayCache::purge(std::int64_t now_unix) {
  while (!by_expiry_.empty() && by_expiry_.begin()->first < now_unix) {
    entries_.erase(by_expiry_.begin()->second);
    by_expiry_.erase(by_expiry_.begin());
  }
}

Result<bool> MemoryReplayCache::remember(const std::string& jti, std::int64_t forget_at, std::int64_t now_unix) {
  std::lock_guard<std::mutex> lock(mu_);
  purge(now_unix);
  if (entries_.count(jti) != 0) return false;
  if (entries_.size() >= capacity_) {
    return fail(Errc::invalid_value, "replay cache full (" + std::to_string(capacity_) + " live token ids)");
  }
  entries_.emplace(jti, forget_at);
  by_expiry_.emplace(forget_at, jti);
  return true;
}

std::size_t MemoryReplayCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

// ---- verification ---------------------------------------------------------------

std::optional<std::string> bearer_token(std::string_view value) {
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) != kScheme[i]) return std::nullopt;
  }
  std::string token = trim(std::string(value.substr(kScheme.size())));
  if (token.empty() || token.find(' ') != std::string::npos) return std::nullopt;
  return token;
}

namespace {

// The three parts of a compact JWS, as sent.
struct CompactJws {
  std::string_view header;
  std::string_view claims;
  std::string_view signature;
  std::string_view signed_part;  // "header.claims", what the signature covers
};

// Stage 1: split the compact serialisation. Refuses: malformed.
VerifyResult<CompactJws> split_compact(std::string_view token) {
  if (token.size() > kMaxTokenBytes) return refuse(VerifyErrc::malformed, "token too long");
  const auto dot1 = token.find('.');
  const auto dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return refuse(VerifyErrc::malformed, "not a compact JWS (three dot-separated parts)");
  }
  return CompactJws{token.substr(0, dot1), token.substr(dot1 + 1, dot2 - dot1 - 1), token.substr(dot2 + 1),
                    token.substr(0, dot2)};
}

// Stage 2: the header names our algorithm and type and a trusted key; the
// signature verifies under that key. Refuses: unsupported_alg, wrong_type,
// malformed, unknown_key, bad_signature.
VerifyResult<const PublicKey*> check_header_and_signature(const CompactJws& jws,
                                                          const std::vector<PublicKey>& trusted) {
  auto header = decode_part(jws.header, "header");
  if (!header) return tl::unexpected(header.error());
  const auto alg = header->find("alg");
  if (alg == header->end() || !alg->is_string() || alg->get<std::string>() != kTokenAlg) {
    return refuse(VerifyErrc::unsupported_alg,
                  "alg must be EdDSA, not " + (alg == header->end() ? std::string("absent") : alg->dump()));
  }
  const auto typ = header->find("typ");
  if (typ == header->end() || !typ->is_string() || typ->get<std::string>() != kTokenType) {
    return refuse(VerifyErrc::wrong_type, "typ must be " + std::string(kTokenType));
  }
  if (header->contains("crit")) return refuse(VerifyErrc::malformed, "critical header extensions are not understood");
  const auto kid = header->find("kid");
  if (kid == header->end() || !kid->is_string()) return refuse(VerifyErrc::unknown_key, "the header names no kid");
  const auto key = std::find_if(trusted.begin(), trusted.end(),
                                [&](const PublicKey& k) { return k.kid == kid->get<std::string>(); });
  if (key == trusted.end())
    return refuse(VerifyErrc::unknown_key, "kid " + kid->get<std::string>() + " is not trusted");
  // The signature covers "header.claims" exactly as sent.
  auto signature = base64url_decode(jws.signature);
  if (!signature) return refuse(VerifyErrc::malformed, "token signature: " + signature.error().message);
  if (signature->size() != 64 || !verify_signature(key->raw, jws.signed_part, *signature)) {
    return refuse(VerifyErrc::bad_signature, "the signature does not verify under kid " + key->kid);
  }
  return &*key;
}

// Stage 3: the claims, each of its type. Refuses: malformed.
VerifyResult<TokenClaims> read_claims(std::string_view part, const PublicKey& key) {
  auto claims = decode_part(part, "claims");
  if (!claims) return tl::unexpected(claims.error());
  TokenClaims c;
  c.kid = key.kid;
  for (auto [name, field] :
       {std::pair{"iss", &c.iss}, std::pair{"aud", &c.aud}, std::pair{"htm", &c.htm}, std::pair{"htu", &c.htu},
        std::pair{"jti", &c.jti}, std::pair{"ref", &c.ref}, std::pair{"oid", &c.oid}}) {
    auto v = string_claim(*claims, name);
    if (!v) return tl::unexpected(v.error());
    *field = std::move(*v);
  }
  auto iat = time_claim(*claims, "iat");
  if (!iat) return tl::unexpected(iat.error());
  auto exp = time_claim(*claims, "exp");
  if (!exp) return tl::unexpected(exp.error());
  c.iat = *iat;
  c.exp = *exp;
  if (claims->contains("ph")) {
    auto ph = string_claim(*claims, "ph");
    if (!ph) return tl::unexpected(ph.error());
    c.ph = std::move(*ph);
  }
  if (claims->contains("fence")) {
    auto fence = time_claim(*claims, "fence");  // a non-negative integer, like the times
    if (!fence) return tl::unexpected(fence.error());
    c.fence = *fence;
  }
  if (!is_b64url_text(c.jti) || c.jti.size() > 64)
    return refuse(VerifyErrc::malformed, "jti must be 1-64 base64url characters");
  return c;
}

// Stage 4: lifetime, expiry, issue time and issuer. Refuses: malformed,
// lifetime_too_long, expired, issued_in_future, wrong_issuer.
VerifyResult<void> check_time_and_issuer(const TokenClaims& c, std::int64_t now, std::int64_t leeway,
                                         const VerifyOptions& options) {
  if (c.exp < c.iat) return refuse(VerifyErrc::malformed, "exp is before iat");
  if (c.exp - c.iat > options.max_lifetime_s) {
    return refuse(VerifyErrc::lifetime_too_long, "lifetime " + std::to_string(c.exp - c.iat) + " s is over " +
                                                     std::to_string(options.max_lifetime_s) + " s");
  }
  if (now > c.exp + leeway) {
    return refuse(VerifyErrc::expired, "expired " + std::to_string(now - c.exp) + " s ago");
  }
  if (c.iat > now + leeway) {
    return refuse(VerifyErrc::issued_in_future, "issued " + std::to_string(c.iat - now) + " s in the future");
  }
  if (options.issuer && c.iss != *options.issuer) {
    return refuse(VerifyErrc::wrong_issuer, "iss '" + c.iss + "' is not '" + *options.issuer + "'");
  }
  return {};
}

// Stage 5: the request it is used for: method, exact URL, audience, body
// hash. Refuses: wrong_method, bad_request, wrong_url, wrong_audience,
// body_hash_required, body_hash_mismatch.
VerifyResult<void> check_request(const TokenClaims& c, const VerifyRequest& request) {
  if (c.htm != request.method) {
    return refuse(VerifyErrc::wrong_method, "minted for " + c.htm + ", used for " + request.method);
  }
  auto url = wire::parse_url(request.url);
  if (!url) return refuse(VerifyErrc::bad_request, "request URL: " + url.error().message);
  const std::string canonical = url->without_userinfo();
  if (c.htu != canonical) return refuse(VerifyErrc::wrong_url, "minted for " + c.htu + ", used for " + canonical);
  if (c.aud != url->origin()) {
    return refuse(VerifyErrc::wrong_audience, "aud " + c.aud + " is not " + url->origin());
  }
  if (request.method == "POST" || c.ph) {
    if (!c.ph) return refuse(VerifyErrc::body_hash_required, "a POST token must carry ph");
    if (!request.body_sha256_hex) return refuse(VerifyErrc::body_hash_required, "the body was not hashed");
    auto raw = from_hex(*request.body_sha256_hex);
    if (!raw || raw->size() != 32) return refuse(VerifyErrc::bad_request, "the body hash is not 64 hex digits");
    if (!equal_constant_time(base64url_encode(*raw), *c.ph)) {
      return refuse(VerifyErrc::body_hash_mismatch, "the body's SHA-256 does not match ph");
    }
  }
  return {};
}

// Stage 6 (L3): the fence is not lower than the highest seen for the
// repository. Refuses: fence_required, bad_request, fence_store_error,
// stale_fence.
VerifyResult<void> check_fence(const TokenClaims& c, FenceStore& fences, const VerifyOptions& options) {
  if (!c.fence) {
    if (options.require_fence) return refuse(VerifyErrc::fence_required, "the token carries no fence");
    return {};
  }
  auto repository = fence_repository(c.htu);
  if (!repository) return tl::unexpected(repository.error());
  auto before = fences.raise(*repository, *c.fence);
  if (!before) return refuse(VerifyErrc::fence_store_error, before.error().message);
  if (*before && **before > *c.fence) {
    return refuse(VerifyErrc::stale_fence, "fence " + std::to_string(*c.fence) + " is lower than fence " +
                                               std::to_string(**before) + " already seen for " + *repository +
                                               ": the lane's lease has passed to another holder");
  }
  return {};
}

VerifyResult<TokenClaims> verify_claims(std::string_view token, const VerifyRequest& request,
                                        const std::vector<PublicKey>& trusted, ReplayCache& replay, FenceStore* fences,
                                        const VerifyOptions& options) {
  const std::int64_t leeway = std::clamp<std::int64_t>(options.leeway_s, 0, kMaxLeewaySeconds);
  const std::int64_t now = request.now_unix;
  auto jws = split_compact(token);
  if (!jws) return tl::unexpected(jws.error());
  auto key = check_header_and_signature(*jws, trusted);
  if (!key) return tl::unexpected(key.error());
  auto claims = read_claims(jws->claims, **key);
  if (!claims) return tl::unexpected(claims.error());
  if (auto ok = check_time_and_issuer(*claims, now, leeway, options); !ok) return tl::unexpected(ok.error());
  if (auto ok = check_request(*claims, request); !ok) return tl::unexpected(ok.error());
  if (fences) {
    if (auto ok = check_fence(*claims, *fences, options); !ok) return tl::unexpected(ok.error());
  }
  // Replay last, so that only tokens that would be accepted are recorded.
  auto fresh = replay.remember(claims->jti, claims->exp + leeway, now);
  if (!fresh) return refuse(VerifyErrc::replay_cache_error, fresh.error().message);
  if (!*fresh) return refuse(VerifyErrc::replayed, "jti " + claims->jti + " was already used");
  return claims;
}

}  // namespace

VerifyResult<TokenClaims> verify_token(std::string_view token, const VerifyRequest& request,
                                       const std::vector<PublicKey>& trusted, ReplayCache& replay,
                                       const VerifyOptions& options) {
  return verify_claims(token, request, trusted, replay, nullptr, options);
}

VerifyResult<TokenClaims> verify_token(std::string_view token, const VerifyRequest& request,
                                       const std::vector<PublicKey>& trusted, ReplayCache& replay, FenceStore& fences,
                                       const VerifyOptions& options) {
  return verify_claims(token, request, trusted, replay, &fences, options);
}

// ---- fences (L3) -------------------------------------------------------------------

Result<std::optional<std::int64_t>> MemoryFenceStore::raise(const std::string& repository, std::int64_t fence) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = highest_.find(repository);
  if (it == highest_.end()) {
    highest_.emplace(repository, fence);
    return std::optional<std::int64_t>();
  }
  const std::int64_t before = it->second;
  it->second = std::max(before, fence);
  return std::optional<std::int64_t>(before);
}

VerifyResult<std::string> fence_repository(const std::string& htu) {
  auto remote = wire::leg_remote(htu);
  if (!remote) return refuse(VerifyErrc::bad_request, "htu " + wire::redact_url(htu) + " is not a leg of a repository");
  auto key = wire::lane_key(*remote);
  if (!key) return refuse(VerifyErrc::bad_request, "htu: " + key.error().message);
  return *key;
}

}  // namespace courier::auth
