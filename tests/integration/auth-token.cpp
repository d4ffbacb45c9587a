// auth-token.cpp — the key:FILE minter's tokens (rules A1, A2) and the
// verifier a server runs on them: keys, the JWS format, every refusal, the
// replay cache, and interoperability with an independent JWT library.
#include <doctest/doctest.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "auth/crypto.hpp"
#include "auth/ed25519_minter.hpp"
#include "auth/verify.hpp"
#include "fixture_server.hpp"
#include "auth_support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_auth_token {

using namespace courier;
using namespace courier::auth;
using namespace courier::test::auth_support;
namespace fs = std::filesystem;

namespace {

// A PEM private key of another type, written with OpenSSL directly.
std::string pem_of(const char* type, const char* param = nullptr, bool encrypted = false) {
  EVP_PKEY* pkey = std::string(type) == "RSA" ? EVP_RSA_gen(2048)
                   : param                    ? EVP_PKEY_Q_keygen(nullptr, nullptr, type, param)
                                              : EVP_PKEY_Q_keygen(nullptr, nullptr, type);
  REQUIRE(pkey != nullptr);
  BIO* mem = BIO_new(BIO_s_mem());
  char pass[] = "secret";
  REQUIRE(PEM_write_bio_PrivateKey(mem, pkey, encrypted ? EVP_aes_256_cbc() : nullptr,
                                   encrypted ? reinterpret_cast<unsigned char*>(pass) : nullptr, encrypted ? 6 : 0,
                                   nullptr, nullptr) == 1);
  char* data = nullptr;
  const long n = BIO_get_mem_data(mem, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(mem);
  EVP_PKEY_free(pkey);
  return out;
}

std::string public_pem_of(const std::string& private_pem) {
  BIO* in = BIO_new_mem_buf(private_pem.data(), static_cast<int>(private_pem.size()));
  EVP_PKEY* pkey = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  REQUIRE(pkey != nullptr);
  BIO* out = BIO_new(BIO_s_mem());
  REQUIRE(PEM_write_bio_PUBKEY(out, pkey) == 1);
  char* data = nullptr;
  const long n = BIO_get_mem_data(out, &data);
  std::string text(data, static_cast<std::size_t>(n));
  BIO_free(out);
  BIO_free(in);
  EVP_PKEY_free(pkey);
  return text;
}

std::string raw_private_of(const std::string& private_pem) {
  BIO* in = BIO_new_mem_buf(private_pem.data(), static_cast<int>(private_pem.size()));
  EVP_PKEY* pkey = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  REQUIRE(pkey != nullptr);
  unsigned char raw[32];
  std::size_t len = sizeof raw;
  REQUIRE(EVP_PKEY_get_raw_private_key(pkey, raw, &len) == 1);
  BIO_free(in);
  EVP_PKEY_free(pkey);
  return std::string(reinterpret_cast<const char*>(raw), len);
}

// PKCS#8 PEM for a raw Ed25519 private key (RFC 8410 structure).
std::string pem_from_raw_private(const std::string& raw) {
  const std::string prefix = from_hex("302e020100300506032b657004220420").value();
  return "-----BEGIN PRIVATE KEY-----\n" + base64_encode(prefix + raw) + "\n-----END PRIVATE KEY-----\n";
}

std::string token_of(const std::string& header) {
  const std::string prefix = "Authorization: Bearer ";
  REQUIRE(header.rfind(prefix, 0) == 0);
  return header.substr(prefix.size());
}

VerifyRequest get_request(std::int64_t now = unix_now(), const std::string& url = kAdvertisementUrl) {
  return VerifyRequest{"GET", url, std::nullopt, now};
}

VerifyRequest post_request(const std::string& body, std::int64_t now = unix_now(),
                           const std::string& url = kReceivePackUrl) {
  return VerifyRequest{"POST", url, body_hex(body), now};
}

std::vector<PublicKey> trust(const TestKey& k) { return {public_key_from_raw(k.key->public_raw()).value()}; }

// A python3 that has PyJWT and cryptography, or "" with the reason.
std::string python_with_jwt(std::string& why) {
  std::vector<std::string> candidates = {"/usr/bin/python3"};
  try {
    candidates.push_back(test::find_on_path("python3"));
  } catch (const std::exception&) {
  }
  for (const auto& py : candidates) {
    if (::access(py.c_str(), X_OK) != 0) continue;
    auto r = test::run({py, "-c", "import jwt, cryptography"}, {}, test::Stdin::bytes, {"PATH=/usr/bin:/bin"});
    if (r.exit_code == 0) return py;
    why += py + ": " + r.err;
  }
  if (why.empty()) why = "no python3 found";
  return {};
}

}  // namespace

TEST_SUITE("auth") {
  TEST_CASE("keygen: a new 0600 PEM key, never overwriting; the loaded key matches what keygen reported") {
    test::TempDir dir;
    const std::string path = dir.path() + "/node.pem";
    auto g = keygen(path);
    REQUIRE_MESSAGE(g, g.error().message);
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(test::read_file(path).rfind("-----BEGIN PRIVATE KEY-----", 0) == 0);
    // Nothing left behind next to it.
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
    CHECK(entries == 1);

    const std::string before = test::read_file(path);
    auto again = keygen(path);
    REQUIRE_FALSE(again);
    CHECK(again.error().message.find("already exists") != std::string::npos);
    CHECK(test::read_file(path) == before);

    auto key = Ed25519Key::load(path);
    REQUIRE_MESSAGE(key, key.error().message);
    CHECK(key->public_b64url() == g->public_key);
    CHECK(key->thumbprint() == g->thumbprint);
    CHECK(key->thumbprint() == jwk_thumbprint(key->public_raw()));
    CHECK(key->public_raw().size() == 32);
    CHECK(g->public_key.size() == 43);  // 32 bytes, base64url, no padding
  }

  TEST_CASE("A1: a private key readable by group or others is refused with the chmod that fixes it; at 0600 it loads") {
    test::TempDir dir;
    const std::string path = dir.path() + "/node.pem";
    REQUIRE(keygen(path));
    for (const unsigned mode : {0644u, 0640u, 0604u, 0660u}) {
      CAPTURE(mode);
      REQUIRE(::chmod(path.c_str(), mode) == 0);
      auto exposed = Ed25519Key::load(path);
      REQUIRE_FALSE_MESSAGE(exposed.has_value(), "a private key readable by group or others was accepted");
      CHECK(exposed.error().code == Errc::invalid_argument);
      CHECK_MESSAGE(exposed.error().message.find("chmod 600 " + path) != std::string::npos, exposed.error().message);
    }
    REQUIRE(::chmod(path.c_str(), 0600) == 0);
    auto key = Ed25519Key::load(path);
    CHECK_MESSAGE(key.has_value(), key.error().message);
    REQUIRE(::chmod(path.c_str(), 0400) == 0);
    CHECK(Ed25519Key::load(path).has_value());
  }

  TEST_CASE("Ed25519 and the JWK thumbprint match RFC 8037's worked example") {
    const std::string d = base64url_decode("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A").value();
    auto key = Ed25519Key::from_pem(pem_from_raw_private(d), "RFC 8037 A.1");
    REQUIRE_MESSAGE(key, key.error().message);
    CHECK(key->public_b64url() == "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo");
    CHECK(key->thumbprint() == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
    const std::string input = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc";
    CHECK(base64url_encode(key->sign(input).value()) ==
          "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg");
  }

  TEST_CASE("loading a key: every problem is named") {
    test::TempDir dir;
    auto load_text = [&](const std::string& name, const std::string& text) {
      const std::string p = dir.path() + "/" + name;
      test::write_file(p, text);
      return Ed25519Key::load(p);
    };
    auto missing = Ed25519Key::load(dir.path() + "/absent.pem");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == Errc::invalid_argument);
    CHECK(missing.error().message.find("no such file") != std::string::npos);

    auto directory = Ed25519Key::load(dir.path());
    REQUIRE_FALSE(directory);
    CHECK(directory.error().message.find("directory") != std::string::npos);

    auto garbage = load_text("garbage.pem", "hello\n");
    REQUIRE_FALSE(garbage);
    CHECK(garbage.error().message.find("not a PEM private key") != std::string::npos);

    auto ec = load_text("ec.pem", pem_of("EC", "P-256"));
    REQUIRE_FALSE(ec);
    CHECK(ec.error().message.find("EC key") != std::string::npos);
    CHECK(ec.error().message.find("Ed25519") != std::string::npos);

    auto rsa = load_text("rsa.pem", pem_of("RSA", nullptr));
    REQUIRE_FALSE(rsa);
    CHECK(rsa.error().message.find("RSA") != std::string::npos);

    auto encrypted = load_text("enc.pem", pem_of("ED25519", nullptr, true));
    REQUIRE_FALSE(encrypted);
    CHECK(encrypted.error().message.find("encrypted") != std::string::npos);

    auto pub = load_text("pub.pem", public_pem_of(pem_of("ED25519")));
    REQUIRE_FALSE(pub);
    CHECK(pub.error().message.find("public key") != std::string::npos);

    if (::geteuid() == 0) {
      MESSAGE("skipping the unreadable-file case: running as root, permissions do not stop reads");
    } else {
      const std::string p = dir.path() + "/locked.pem";
      test::write_file(p, pem_of("ED25519"));
      ::chmod(p.c_str(), 0);
      auto locked = Ed25519Key::load(p);
      REQUIRE_FALSE(locked);
      CHECK(locked.error().message.find("cannot be read") != std::string::npos);
    }
  }

  TEST_CASE(
      "A2: a GET token carries exactly its leg, ref, object and a lifetime within ttl and deadline; it verifies") {
    TestKey k;
    Ed25519Minter minter(k.key);
    auto c = context();
    const std::int64_t before = unix_now();
    auto header = minter.mint(get_leg(c));
    REQUIRE_MESSAGE(header, header.error().message);
    const std::string token = token_of(*header);
    const TokenParts parts = split_token(token);
    CHECK(parts.header ==
          nlohmann::json{{"alg", "EdDSA"}, {"typ", "git-courier+jwt"}, {"kid", k.generated.thumbprint}});
    const auto& cl = parts.claims;
    CHECK(cl.at("iss") == "git-courier");
    CHECK(cl.at("aud") == "https://127.0.0.1:8443");
    CHECK(cl.at("htm") == "GET");
    CHECK(cl.at("htu") == kAdvertisementUrl);
    CHECK(cl.at("ref") == kRef);
    CHECK(cl.at("oid") == kOid);
    CHECK_FALSE(cl.contains("ph"));
    CHECK(cl.at("iat").get<std::int64_t>() >= before);
    CHECK(cl.at("exp").get<std::int64_t>() - cl.at("iat").get<std::int64_t>() == 60);
    CHECK(base64url_decode(cl.at("jti").get<std::string>()).value().size() == 16);
    CHECK(cl.size() == 9);
    CHECK(parts.signature.size() == 64);
    // Compact form: base64url without padding.
    CHECK(token.find('=') == std::string::npos);

    MemoryReplayCache cache;
    auto ok = verify_token(token, get_request(), trust(k), cache);
    REQUIRE_MESSAGE(ok, verify_errc_name(ok.error().code), ": ", ok.error().message);
    CHECK(ok->kid == k.generated.thumbprint);
    CHECK(ok->htu == kAdvertisementUrl);
  }

  TEST_CASE("A2: a POST token carries ph = base64url(SHA-256(body)); it verifies only with that body") {
    TestKey k;
    Ed25519Minter minter(k.key);
    const std::string body = "0000PACK... the receive-pack request body";
    auto header = minter.mint(post_leg(context(), body));
    REQUIRE_MESSAGE(header, header.error().message);
    const std::string token = token_of(*header);
    CHECK(split_token(token).claims.at("ph") == base64url_encode(sha256(body)));
    CHECK(split_token(token).claims.at("htm") == "POST");

    MemoryReplayCache cache;
    auto mismatch = verify_token(token, post_request(body + "x"), trust(k), cache);
    REQUIRE_FALSE(mismatch);
    CHECK(mismatch.error().code == VerifyErrc::body_hash_mismatch);
    auto unhashed =
        verify_token(token, VerifyRequest{"POST", kReceivePackUrl, std::nullopt, unix_now()}, trust(k), cache);
    REQUIRE_FALSE(unhashed);
    CHECK(unhashed.error().code == VerifyErrc::body_hash_required);
    // Refused attempts did not burn the token id.
    auto ok = verify_token(token, post_request(body), trust(k), cache);
    CHECK_MESSAGE(ok, (ok ? "" : ok.error().message));
  }

  TEST_CASE("A2: exp is never later than the deadline; iss and ttl are configurable") {
    TestKey k;
    Ed25519Minter minter(k.key);
    auto c = context(5'000);
    c.issuer = "seller-node-7";
    const std::int64_t wall_deadline = unix_now() + 5;
    auto t = split_token(token_of(minter.mint(get_leg(c)).value()));
    CHECK(t.claims.at("iss") == "seller-node-7");
    CHECK_MESSAGE(t.claims.at("exp").get<std::int64_t>() <= wall_deadline,
                  "the token outlives the delivery's deadline");
    CHECK(t.claims.at("exp").get<std::int64_t>() - t.claims.at("iat").get<std::int64_t>() <= 5);

    c = context();
    c.ttl = std::chrono::seconds(7);
    t = split_token(token_of(minter.mint(get_leg(c)).value()));
    CHECK(t.claims.at("exp").get<std::int64_t>() - t.claims.at("iat").get<std::int64_t>() == 7);

    c.ttl = std::chrono::seconds(0);
    CHECK_FALSE(minter.mint(get_leg(c)));
    auto late = context(-1);
    auto refused = minter.mint(get_leg(late));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("deadline") != std::string::npos);
    // A POST without its body hash cannot be bound, so it is not minted.
    LegRequest post = post_leg(context(), "x");
    post.body_sha256_hex.reset();
    CHECK_FALSE(minter.mint(post));
  }

  TEST_CASE("A1: no form of the private key appears in any minted header") {
    TestKey k;
    Ed25519Minter minter(k.key);
    const std::string pem = test::read_file(k.path);
    const std::string raw = raw_private_of(pem);
    REQUIRE(raw.size() == 32);
    std::vector<std::string> forms = {raw, base64url_encode(raw), base64_encode(raw), to_hex(raw), pem};
    std::istringstream lines(pem);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("-----", 0) != 0 && !line.empty()) forms.push_back(line);
    }
    // The PEM body's base64 also embeds the key at a 3-byte-aligned offset:
    // any 12-character window of it must not appear either.
    const std::string body = forms.back();
    for (std::size_t i = 0; i + 12 <= body.size(); i += 4) forms.push_back(body.substr(i, 12));
    for (std::size_t i = 0; i + 8 <= raw.size(); ++i) forms.push_back(raw.substr(i, 8));

    auto c = context();
    for (int i = 0; i < 20; ++i) {
      const std::string header =
          (i % 2 ? minter.mint(get_leg(c)) : minter.mint(post_leg(c, "body " + std::to_string(i)))).value();
      const TokenParts parts = split_token(token_of(header));
      const std::string decoded = parts.header.dump() + parts.claims.dump() + parts.signature;
      for (const auto& f : forms) {
        CHECK_MESSAGE(header.find(f) == std::string::npos, "key material found in a header");
        CHECK_MESSAGE(decoded.find(f) == std::string::npos, "key material found in a decoded token");
      }
    }
  }

  TEST_CASE("kid is the key's RFC 7638 thumbprint, and every mint has a distinct jti") {
    TestKey k;
    Ed25519Minter minter(k.key);
    const std::string x = base64url_encode(k.key->public_raw());
    const std::string expected = base64url_encode(sha256(R"({"crv":"Ed25519","kty":"OKP","x":")" + x + R"("})"));
    CHECK(k.key->thumbprint() == expected);
    std::set<std::string> jtis;
    auto c = context();
    for (int i = 0; i < 500; ++i) {
      const TokenParts parts = split_token(token_of(minter.mint(get_leg(c)).value()));
      CHECK(parts.header.at("kid") == expected);
      jtis.insert(parts.claims.at("jti").get<std::string>());
    }
    CHECK(jtis.size() == 500);
  }

  TEST_CASE("verifier: every refusal names what failed") {
    TestKey k;
    TestKey other;
    Ed25519Minter minter(k.key);
    auto c = context();
    const std::string get_token = token_of(minter.mint(get_leg(c)).value());
    const std::string body = "0000";
    const std::string post_token = token_of(minter.mint(post_leg(c, body)).value());
    const TokenParts good = split_token(get_token);
    const std::int64_t iat = good.claims.at("iat").get<std::int64_t>();
    const std::int64_t exp = good.claims.at("exp").get<std::int64_t>();

    auto expect = [&](const std::string& token, const VerifyRequest& request, VerifyErrc code,
                      const std::vector<PublicKey>& keys) {
      MemoryReplayCache cache;
      auto r = verify_token(token, request, keys, cache);
      REQUIRE_FALSE_MESSAGE(r, "accepted a token it should refuse with ", verify_errc_name(code));
      CHECK_MESSAGE(r.error().code == code, "wanted ", verify_errc_name(code), ", got ",
                    verify_errc_name(r.error().code), ": ", r.error().message);
      CHECK_FALSE(r.error().message.empty());
      CHECK(cache.size() == 0);  // a refused token is never recorded
    };
    const auto keys = trust(k);

    SUBCASE("bad signature: a flipped signature byte, a changed claim, another key under this kid") {
      std::string sig = good.signature;
      sig[0] = static_cast<char>(sig[0] ^ 0x01);
      const std::string input = get_token.substr(0, get_token.rfind('.'));
      expect(input + "." + base64url_encode(sig), get_request(), VerifyErrc::bad_signature, keys);
      nlohmann::json claims = good.claims;
      claims["ref"] = "refs/heads/other";
      const std::string forged = base64url_encode(good.header.dump()) + "." + base64url_encode(claims.dump()) + "." +
                                 base64url_encode(good.signature);
      expect(forged, get_request(), VerifyErrc::bad_signature, keys);
      expect(get_token, get_request(), VerifyErrc::bad_signature,
             {PublicKey{other.key->public_raw(), k.generated.thumbprint}});
    }
    SUBCASE("unknown kid") { expect(get_token, get_request(), VerifyErrc::unknown_key, trust(other)); }
    SUBCASE("alg none and other algorithms") {
      nlohmann::json none = good.header;
      none["alg"] = "none";
      const std::string unsigned_token =
          base64url_encode(none.dump()) + "." + base64url_encode(good.claims.dump()) + ".";
      expect(unsigned_token, get_request(), VerifyErrc::unsupported_alg, keys);
      nlohmann::json hs = good.header;
      hs["alg"] = "HS256";
      expect(sign_token(*k.key, hs, good.claims), get_request(), VerifyErrc::unsupported_alg, keys);
      nlohmann::json absent = good.header;
      absent.erase("alg");
      expect(sign_token(*k.key, absent, good.claims), get_request(), VerifyErrc::unsupported_alg, keys);
    }
    SUBCASE("typ, crit") {
      nlohmann::json h = good.header;
      h["typ"] = "JWT";
      expect(sign_token(*k.key, h, good.claims), get_request(), VerifyErrc::wrong_type, keys);
      h = good.header;
      h["crit"] = {"exp"};
      expect(sign_token(*k.key, h, good.claims), get_request(), VerifyErrc::malformed, keys);
    }
    SUBCASE("replayed jti") {
      MemoryReplayCache cache;
      REQUIRE(verify_token(get_token, get_request(), keys, cache));
      auto again = verify_token(get_token, get_request(), keys, cache);
      REQUIRE_FALSE(again);
      CHECK(again.error().code == VerifyErrc::replayed);
    }
    SUBCASE("a GET token used for the POST, a POST token used for the GET") {
      expect(get_token, post_request(body), VerifyErrc::wrong_method, keys);
      expect(post_token, get_request(unix_now(), kReceivePackUrl), VerifyErrc::wrong_method, keys);
    }
    SUBCASE("wrong htu: another service, another repository, another port") {
      expect(get_token, get_request(unix_now(), kRemote + "/info/refs?service=git-upload-pack"), VerifyErrc::wrong_url,
             keys);
      expect(get_token, get_request(unix_now(), "https://127.0.0.1:8443/team/s.git/info/refs?service=git-receive-pack"),
             VerifyErrc::wrong_url, keys);
      expect(get_token, get_request(unix_now(), "https://127.0.0.1:9443/team/r.git/info/refs?service=git-receive-pack"),
             VerifyErrc::wrong_url, keys);
      // The same URL spelled differently is the same URL.
      MemoryReplayCache cache;
      CHECK(verify_token(
          get_token, get_request(unix_now(), "HTTPS://127.0.0.1:8443/team/r.git/info/refs?service=git-receive-pack"),
          keys, cache));
    }
    SUBCASE("wrong aud") {
      nlohmann::json cl = good.claims;
      cl["aud"] = "https://elsewhere.example";
      expect(sign_token(*k.key, good.header, cl), get_request(), VerifyErrc::wrong_audience, keys);
    }
    SUBCASE("expired, and the leeway") {
      expect(get_token, get_request(exp + 3), VerifyErrc::expired, keys);
      expect(get_token, get_request(exp + 60), VerifyErrc::expired, keys);
      MemoryReplayCache cache;
      CHECK(verify_token(get_token, get_request(exp + 2), keys, cache));  // default leeway 2 s
      MemoryReplayCache wide;
      VerifyOptions options;
      options.leeway_s = 3600;  // clamped to kMaxLeewaySeconds
      auto r = verify_token(get_token, get_request(exp + kMaxLeewaySeconds + 1), keys, wide, options);
      REQUIRE_FALSE(r);
      CHECK(r.error().code == VerifyErrc::expired);
    }
    SUBCASE("issued in the future") { expect(get_token, get_request(iat - 10), VerifyErrc::issued_in_future, keys); }
    SUBCASE("lifetime too long, exp before iat") {
      nlohmann::json cl = good.claims;
      cl["exp"] = iat + 3600;
      expect(sign_token(*k.key, good.header, cl), get_request(), VerifyErrc::lifetime_too_long, keys);
      cl["exp"] = iat - 1;
      expect(sign_token(*k.key, good.header, cl), get_request(iat - 1), VerifyErrc::malformed, keys);
    }
    SUBCASE("ph: mismatch, missing on a POST token") {
      expect(post_token, post_request("0001"), VerifyErrc::body_hash_mismatch, keys);
      nlohmann::json cl = split_token(post_token).claims;
      cl.erase("ph");
      expect(sign_token(*k.key, good.header, cl), post_request(body), VerifyErrc::body_hash_required, keys);
    }
    SUBCASE("missing and mistyped claims") {
      for (const char* claim : {"iss", "aud", "htm", "htu", "iat", "exp", "jti", "ref", "oid"}) {
        CAPTURE(claim);
        nlohmann::json cl = good.claims;
        cl.erase(claim);
        expect(sign_token(*k.key, good.header, cl), get_request(), VerifyErrc::missing_claim, keys);
      }
      nlohmann::json cl = good.claims;
      cl["exp"] = std::to_string(exp);
      expect(sign_token(*k.key, good.header, cl), get_request(), VerifyErrc::malformed, keys);
      cl = good.claims;
      cl["jti"] = "../../etc/passwd";
      expect(sign_token(*k.key, good.header, cl), get_request(), VerifyErrc::malformed, keys);
    }
    SUBCASE("issuer, when the server names one") {
      MemoryReplayCache cache;
      VerifyOptions options;
      options.issuer = "someone-else";
      auto r = verify_token(get_token, get_request(), keys, cache, options);
      REQUIRE_FALSE(r);
      CHECK(r.error().code == VerifyErrc::wrong_issuer);
    }
    SUBCASE("malformed serialisations") {
      for (const std::string& t : {std::string(""), std::string("a.b"), std::string("a.b.c.d"), std::string("!!.x.y"),
                                   get_token + "=", std::string(kMaxTokenBytes + 1, 'a')}) {
        expect(t, get_request(), VerifyErrc::malformed, keys);
      }
    }
  }

  TEST_CASE("replay cache: bounded (fails closed when full), forgets after expiry, one winner across threads") {
    MemoryReplayCache small(2);
    CHECK(small.remember("a", 100, 10).value());
    CHECK(small.remember("b", 100, 10).value());
    CHECK_FALSE(small.remember("a", 100, 10).value());
    auto full = small.remember("c", 100, 10);
    REQUIRE_FALSE(full);
    CHECK(full.error().message.find("full") != std::string::npos);
    CHECK(small.remember("c", 200, 101).value());  // a and b forgotten after 100
    CHECK(small.size() == 1);

    MemoryReplayCache shared;
    std::atomic<int> wins{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 200; ++i) {
          if (shared.remember("id-" + std::to_string(i), 1000, 1).value()) ++wins;
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK(wins.load() == 200);
  }

  TEST_CASE("verifier keys: PEM public, PEM private, base64url file and text; bearer header parsing") {
    TestKey k;
    test::TempDir dir;
    const std::string pem = test::read_file(k.path);
    test::write_file(dir.path() + "/pub.pem", public_pem_of(pem));
    test::write_file(dir.path() + "/pub.txt", k.generated.public_key + "\n");
    for (const std::string& source :
         {dir.path() + "/pub.pem", k.path, dir.path() + "/pub.txt", k.generated.public_key}) {
      CAPTURE(source);
      auto pk = load_public_key(source);
      REQUIRE_MESSAGE(pk, pk.error().message);
      CHECK(pk->raw == k.key->public_raw());
      CHECK(pk->kid == k.generated.thumbprint);
    }
    CHECK_FALSE(load_public_key(dir.path() + "/absent.pem"));
    auto relative = load_public_key("absent.pub");
    REQUIRE_FALSE(relative);
    CHECK(relative.error().message.find("no such file") != std::string::npos);
    test::write_file(dir.path() + "/ec.pem", public_pem_of(pem_of("EC", "P-256")));
    auto ec = load_public_key(dir.path() + "/ec.pem");
    REQUIRE_FALSE(ec);
    CHECK(ec.error().message.find("Ed25519") != std::string::npos);
    CHECK_FALSE(load_public_key("c2hvcnQ"));

    CHECK(bearer_token("Bearer abc.def.ghi").value() == "abc.def.ghi");
    CHECK(bearer_token("bearer   abc ").value() == "abc");
    CHECK_FALSE(bearer_token("Basic abc"));
    CHECK_FALSE(bearer_token("Bearer "));
    CHECK_FALSE(bearer_token("Bearer a b"));
  }

  TEST_CASE("interop: PyJWT verifies our tokens, and we verify PyJWT's (alg none refused)") {
    std::string why;
    const std::string python = python_with_jwt(why);
    if (python.empty()) {
      MESSAGE("skipping: no python3 with jwt and cryptography: " << why);
      return;
    }
    TestKey k;
    Ed25519Minter minter(k.key);
    const std::string token = token_of(minter.mint(post_leg(context(), "body")).value());
    const char* verify_script = R"PY(
import base64, json, sys, jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
x = sys.argv[1]
key = Ed25519PublicKey.from_public_bytes(base64.urlsafe_b64decode(x + "=" * (-len(x) % 4)))
claims = jwt.decode(sys.argv[2], key, algorithms=["EdDSA"], audience=sys.argv[3])
print(json.dumps({"header": jwt.get_unverified_header(sys.argv[2]), "claims": claims}))
)PY";
    auto r = test::run({python, "-c", verify_script, k.generated.public_key, token, "https://127.0.0.1:8443"}, {},
                       test::Stdin::bytes, {"PATH=/usr/bin:/bin"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const auto out = nlohmann::json::parse(r.out);
    CHECK(out.at("header").at("alg") == "EdDSA");
    CHECK(out.at("header").at("kid") == k.generated.thumbprint);
    CHECK(out.at("claims").at("htu") == kReceivePackUrl);
    CHECK(out.at("claims").at("ph") == base64url_encode(sha256("body")));

    // A tampered token is refused by PyJWT too.
    const std::string tampered = token.substr(0, token.size() - 2) + (token[token.size() - 2] == 'A' ? "BA" : "AA");
    auto bad = test::run({python, "-c", verify_script, k.generated.public_key, tampered, "https://127.0.0.1:8443"}, {},
                         test::Stdin::bytes, {"PATH=/usr/bin:/bin"});
    CHECK(bad.exit_code != 0);

    // The other way: PyJWT signs with our key file; our verifier accepts it
    // once, and refuses PyJWT's unsigned token.
    const char* sign_script = R"PY(
import json, sys, time, jwt
from cryptography.hazmat.primitives.serialization import load_pem_private_key
key = load_pem_private_key(open(sys.argv[1], "rb").read(), password=None)
now = int(time.time())
claims = {"iss": "py", "aud": "https://127.0.0.1:8443", "htm": "GET", "htu": sys.argv[3], "iat": now,
          "exp": now + 30, "jti": "cHl0aG9uLWp0aQ", "ref": "refs/heads/main", "oid": "0" * 40}
print(jwt.encode(claims, key, algorithm="EdDSA", headers={"kid": sys.argv[2], "typ": "git-courier+jwt"}))
print(jwt.encode(claims, None, algorithm="none", headers={"kid": sys.argv[2], "typ": "git-courier+jwt"}))
)PY";
    auto signed_run = test::run({python, "-c", sign_script, k.path, k.generated.thumbprint, kAdvertisementUrl}, {},
                                test::Stdin::bytes, {"PATH=/usr/bin:/bin"});
    REQUIRE_MESSAGE(signed_run.exit_code == 0, signed_run.err);
    std::istringstream lines(signed_run.out);
    std::string py_signed, py_none;
    std::getline(lines, py_signed);
    std::getline(lines, py_none);
    MemoryReplayCache cache;
    auto accepted = verify_token(py_signed, get_request(), trust(k), cache);
    CHECK_MESSAGE(accepted, (accepted ? "" : accepted.error().message));
    auto replay = verify_token(py_signed, get_request(), trust(k), cache);
    REQUIRE_FALSE(replay);
    CHECK(replay.error().code == VerifyErrc::replayed);
    auto none = verify_token(py_none, get_request(), trust(k), cache);
    REQUIRE_FALSE(none);
    CHECK(none.error().code == VerifyErrc::unsupported_alg);
  }
}

}  // namespace integration_auth_token
