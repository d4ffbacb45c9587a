// ed25519_minter.cpp — Ed25519 keys (load, generate) and per-leg JWS tokens.
#include "auth/ed25519_minter.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "auth/crypto.hpp"
#include "sys/lazy_library.hpp"
#include "sys/scratch_dir.hpp"
#include "sys/small_file.hpp"

namespace courier::auth {

namespace fs = std::filesystem;

namespace {

// Encrypted keys are refused, never prompted for: a service has no terminal.
int refuse_passphrase(char*, int, int, void*) { return -1; }

Error bad_key(const std::string& what, const std::string& why) {
  return Error{Errc::invalid_argument, "key " + what + ": " + why};
}

// The one JSON serialiser for tokens: compact, keys in sorted order (a
// property of nlohmann::json objects), and invalid UTF-8 an error value.
Result<std::string> dump(const nlohmann::json& j) {
  try {
    return j.dump();
  } catch (const nlohmann::json::exception& e) {
    return fail(Errc::invalid_argument, std::string("cannot encode token JSON: ") + e.what());
  }
}

std::int64_t system_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

std::string jwk_thumbprint(std::string_view public_raw) {
  // RFC 7638 §3: the required members in lexicographic order, no whitespace.
  const std::string jwk = R"({"crv":"Ed25519","kty":"OKP","x":")" + base64url_encode(public_raw) + R"("})";
  return base64url_encode(sha256(jwk));
}

// ---- keys ------------------------------------------------------------------------

Result<Ed25519Key> Ed25519Key::from_pem(std::string_view pem, const std::string& what) {
  if (auto lib = sys::load_shared_library(sys::SharedLibrary::crypto); !lib) return tl::unexpected(lib.error());
  if (pem.size() > 64 * 1024) return tl::unexpected(bad_key(what, "too large to be a PEM key"));
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return tl::unexpected(openssl_error("key " + what + ": BIO_new_mem_buf"));
  std::unique_ptr<EVP_PKEY, PkeyFree> pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, refuse_passphrase, nullptr));
  if (!pkey) {
    const Error detail = openssl_error("PEM_read_bio_PrivateKey");
    if (pem.find("ENCRYPTED") != std::string_view::npos) {
      return tl::unexpected(bad_key(what, "is encrypted; git-courier needs an unencrypted PKCS#8 key (chmod 600)"));
    }
    if (pem.find("-----BEGIN PUBLIC KEY-----") != std::string_view::npos) {
      return tl::unexpected(bad_key(what, "is a public key; the parent needs the private key"));
    }
    return tl::unexpected(bad_key(what, "is not a PEM private key (" + detail.message + ")"));
  }
  if (EVP_PKEY_get_id(pkey.get()) != EVP_PKEY_ED25519) {
    const char* name = EVP_PKEY_get0_type_name(pkey.get());
    return tl::unexpected(bad_key(what, std::string("is a ") + (name ? name : "non-Ed25519") +
                                            " key; git-courier signs with Ed25519 (git-courier keygen)"));
  }
  std::array<unsigned char, kEd25519KeyBytes> raw{};
  std::size_t len = raw.size();
  if (EVP_PKEY_get_raw_public_key(pkey.get(), raw.data(), &len) != 1 || len != raw.size()) {
    return tl::unexpected(openssl_error("key " + what + ": EVP_PKEY_get_raw_public_key"));
  }
  Ed25519Key key;
  key.pkey_ = std::shared_ptr<EVP_PKEY>(pkey.release(), PkeyFree{});
  key.public_raw_.assign(reinterpret_cast<const char*>(raw.data()), len);
  key.thumbprint_ = jwk_thumbprint(key.public_raw_);
  return key;
}

Result<Ed25519Key> Ed25519Key::load(const std::string& path) {
  // Never blocks (a FIFO), never grows without bound (/dev/zero), never
  // follows a symbolic link: see read_small_regular_file.
  auto file = sys::read_small_regular_file(path, sys::kMaxSecretFile);
  if (!file) return tl::unexpected(bad_key("file " + path, file.error().message));
  std::string pem = std::move(file->bytes);
  auto key = from_pem(pem, "file " + path);
  wipe(pem);
  if (!key) return key;
  // As ssh does: a private key that others can read is no longer private,
  // and using it would hide that. Checked once it is known to be a private
  // key, so a file that is not one is named for what it is.
  if ((file->mode & 077) != 0) {
    char mode[16];
    std::snprintf(mode, sizeof mode, "%04o", file->mode);
    return tl::unexpected(bad_key("file " + path, std::string("is readable or writable by group or others (mode ") +
                                                      mode + "); a private key must be private: chmod 600 " + path));
  }
  return key;
}

std::string Ed25519Key::public_b64url() const { return base64url_encode(public_raw_); }

Result<std::string> Ed25519Key::sign(std::string_view message) const {
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx) return tl::unexpected(openssl_error("EVP_MD_CTX_new"));
  // Ed25519 is "pure": no digest is named, the whole message is signed.
  if (EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, pkey_.get()) != 1) {
    return tl::unexpected(openssl_error("EVP_DigestSignInit"));
  }
  std::array<unsigned char, 64> sig{};
  std::size_t len = sig.size();
  if (EVP_DigestSign(ctx.get(), sig.data(), &len, reinterpret_cast<const unsigned char*>(message.data()),
                     message.size()) != 1) {
    return tl::unexpected(openssl_error("EVP_DigestSign"));
  }
  return std::string(reinterpret_cast<const char*>(sig.data()), len);
}

Result<GeneratedKey> keygen(const std::string& path) {
  if (auto lib = sys::load_shared_library(sys::SharedLibrary::crypto); !lib) return tl::unexpected(lib.error());
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path, ec))) {
    return fail(Errc::invalid_argument, "key file " + path + " already exists; refusing to overwrite it");
  }
  std::unique_ptr<EVP_PKEY, PkeyFree> pkey(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  if (!pkey) return tl::unexpected(openssl_error("keygen: EVP_PKEY_Q_keygen(ED25519)"));
  std::unique_ptr<BIO, BioFree> mem(BIO_new(BIO_s_mem()));
  if (!mem) return tl::unexpected(openssl_error("keygen: BIO_new"));
  if (PEM_write_bio_PrivateKey(mem.get(), pkey.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return tl::unexpected(openssl_error("keygen: PEM_write_bio_PrivateKey"));
  }
  char* data = nullptr;
  const long n = BIO_get_mem_data(mem.get(), &data);
  std::string pem(data, static_cast<std::size_t>(n));

  // The key is written inside a fresh 0700 directory next to its final
  // place, made 0600 there, and then hard-linked into place: nobody else
  // can open it while it is being written, and link() fails rather than
  // replace a file that appeared meanwhile.
  const fs::path target(path);
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  auto made = sys::make_unique_dir((parent / ".git-courier-keygen-").string());
  if (!made) {
    wipe(pem);
    return fail(Errc::os_error,
                "keygen: cannot create a private directory in " + parent.string() + ": " + made.error().message);
  }
  const std::string tmpl = *made;
  const fs::path staging = fs::path(tmpl) / "key.pem";
  auto cleanup = [&] { fs::remove_all(tmpl, ec); };
  {
    std::ofstream out(staging, std::ios::binary | std::ios::trunc);
    out.write(pem.data(), static_cast<std::streamsize>(pem.size()));
    out.close();
    wipe(pem);
    if (!out) {
      cleanup();
      return fail(Errc::os_error, "keygen: cannot write " + staging.string());
    }
  }
  fs::permissions(staging, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace, ec);
  if (ec) {
    cleanup();
    return fail(Errc::os_error, "keygen: chmod 600 " + staging.string() + ": " + ec.message());
  }
  fs::create_hard_link(staging, target, ec);
  if (ec) {
    const std::error_code link_error = ec;
    cleanup();
    if (link_error == std::errc::file_exists) {
      return fail(Errc::invalid_argument, "key file " + path + " already exists; refusing to overwrite it");
    }
    return fail(Errc::os_error, "keygen: cannot create " + path + ": " + link_error.message());
  }
  cleanup();

  std::array<unsigned char, kEd25519KeyBytes> raw{};
  std::size_t len = raw.size();
  if (EVP_PKEY_get_raw_public_key(pkey.get(), raw.data(), &len) != 1) {
    return tl::unexpected(openssl_error("keygen: EVP_PKEY_get_raw_public_key"));
  }
  const std::string public_raw(reinterpret_cast<const char*>(raw.data()), len);
  return GeneratedKey{base64url_encode(public_raw), jwk_thumbprint(public_raw)};
}

// ---- tokens -------------------------------------------------------------------------

Ed25519Minter::Ed25519Minter(std::shared_ptr<const Ed25519Key> key, std::function<std::int64_t()> wall_clock)
    : key_(std::move(key)), wall_clock_(std::move(wall_clock)) {
  if (!wall_clock_) wall_clock_ = system_now_ns;
}

Result<std::string> Ed25519Minter::token(const LegRequest& request) const {
  const MintContext& ctx = request.context;
  if (ctx.ttl.count() <= 0) return fail(Errc::invalid_argument, "token lifetime must be positive");
  auto url = wire::parse_url(request.url);
  if (!url) return tl::unexpected(url.error());

  std::optional<std::string> ph;
  if (request.method == "POST") {
    if (!request.body_sha256_hex || !is_sha256_hex(*request.body_sha256_hex)) {
      return fail(Errc::invalid_argument, "a POST token needs the body's SHA-256 as 64 lower-case hex digits");
    }
    auto raw = from_hex(*request.body_sha256_hex);
    if (!raw) return tl::unexpected(raw.error());
    ph = base64url_encode(*raw);
  } else if (request.body_sha256_hex) {
    return fail(Errc::invalid_argument, "a " + request.method + " has no body to bind");
  }

  // Both clocks are read once: the deadline (monotonic) becomes a wall-clock
  // instant by the distance to it, rounded down so exp is never later.
  const std::int64_t wall_ns = wall_clock_();
  const sys::MonoNs mono_ns = sys::mono_now_ns();
  const sys::MonoNs left = ctx.deadline - mono_ns;
  if (left <= 0) return fail(Errc::invalid_argument, "the delivery's deadline has passed");
  const std::int64_t iat = floor_div(wall_ns, 1'000'000'000);
  const std::int64_t deadline_s = floor_div(wall_ns + left, 1'000'000'000);
  const std::int64_t exp = std::min<std::int64_t>(iat + ctx.ttl.count(), deadline_s);

  auto jti = random_bytes(kJtiBytes);
  if (!jti) return tl::unexpected(jti.error());

  nlohmann::json header = {
      {"alg", std::string(kTokenAlg)}, {"typ", std::string(kTokenType)}, {"kid", key_->thumbprint()}};
  nlohmann::json claims = {
      {"iss", ctx.issuer}, {"aud", url->origin()}, {"htm", request.method},         {"htu", url->without_userinfo()},
      {"iat", iat},        {"exp", exp},           {"jti", base64url_encode(*jti)}, {"ref", ctx.ref},
      {"oid", ctx.oid},
  };
  if (ph) claims["ph"] = *ph;
  // L3: the lease's fence, so a verifier can refuse a holder whose lease
  // another host has taken since (docs/auth.md).
  if (request.fence) claims["fence"] = *request.fence;

  auto header_json = dump(header);
  if (!header_json) return tl::unexpected(header_json.error());
  auto claims_json = dump(claims);
  if (!claims_json) return tl::unexpected(claims_json.error());
  const std::string signing_input = base64url_encode(*header_json) + "." + base64url_encode(*claims_json);
  auto sig = key_->sign(signing_input);
  if (!sig) return tl::unexpected(sig.error());
  return signing_input + "." + base64url_encode(*sig);
}

Result<std::string> Ed25519Minter::mint(const LegRequest& request) {
  auto t = token(request);
  if (!t) return tl::unexpected(t.error());
  return "Authorization: Bearer " + *t;
}

}  // namespace courier::auth
