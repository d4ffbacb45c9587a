// auth_spec.cpp — auth specs and their minter factories.
#include "auth/auth_spec.hpp"

#include <filesystem>

#include "auth/bearer_minter.hpp"
#include "auth/crypto.hpp"
#include "auth/ed25519_minter.hpp"

namespace courier::auth {

Result<AuthSpec> parse_auth_spec(std::string_view text) {
  AuthSpec spec;
  auto with_file = [&](std::string_view prefix, AuthSpec::Kind kind) -> Result<AuthSpec> {
    const std::string file(text.substr(prefix.size()));
    if (file.empty())
      return fail(Errc::invalid_argument, "auth '" + std::string(text) + "' needs a file after the ':'");
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(file, ec);
    spec.kind = kind;
    spec.file = ec ? file : absolute.lexically_normal().string();
    return spec;
  };
  if (text == "none") return spec;
  if (text == "credential") {
    spec.kind = AuthSpec::Kind::credential;
    return spec;
  }
  if (text.rfind("key:", 0) == 0) return with_file("key:", AuthSpec::Kind::key);
  if (text.rfind("bearer:", 0) == 0) return with_file("bearer:", AuthSpec::Kind::bearer);
  if (text.rfind("ssh-key:", 0) == 0) return with_file("ssh-key:", AuthSpec::Kind::ssh_key);
  return fail(Errc::invalid_argument, "unknown auth '" + std::string(text) +
                                          "' (expected none, key:FILE, credential, bearer:FILE or ssh-key:FILE)");
}

Result<MinterFactory> make_minter_factory(const AuthSpec& spec, FactoryOptions options) {
  switch (spec.kind) {
    case AuthSpec::Kind::none:
      return MinterFactory([](const MintContext&) -> Result<std::shared_ptr<Minter>> { return nullptr; });
    case AuthSpec::Kind::key: {
      auto key = Ed25519Key::load(spec.file);
      if (!key) return tl::unexpected(key.error());
      auto shared = std::make_shared<const Ed25519Key>(std::move(*key));
      return MinterFactory([shared](const MintContext&) -> Result<std::shared_ptr<Minter>> {
        return std::make_shared<Ed25519Minter>(shared);
      });
    }
    case AuthSpec::Kind::credential: {
      auto credential = std::move(options.credential);
      return MinterFactory([credential](const MintContext& context) -> Result<std::shared_ptr<Minter>> {
        return std::make_shared<CredentialMinter>(context, credential);
      });
    }
    case AuthSpec::Kind::bearer: {
      auto checked = read_bearer_token(spec.file);
      if (!checked) return tl::unexpected(checked.error());
      wipe(*checked);
      const std::string file = spec.file;
      return MinterFactory([file](const MintContext&) -> Result<std::shared_ptr<Minter>> {
        auto token = read_bearer_token(file);
        if (!token) return tl::unexpected(token.error());
        return std::make_shared<BearerMinter>(std::move(*token));
      });
    }
    case AuthSpec::Kind::ssh_key:
      // Nothing goes in an HTTP header: the key is loaded by whoever holds
      // it (the command line, with its passphrase; the service, at start)
      // and rides in DeliveryRequest::ssh_key.
      return MinterFactory([](const MintContext&) -> Result<std::shared_ptr<Minter>> { return nullptr; });
  }
  return fail(Errc::invalid_argument, "unknown auth kind");
}

Result<MinterFactory> minter_factory(std::string_view text, FactoryOptions options) {
  auto spec = parse_auth_spec(text);
  if (!spec) return tl::unexpected(spec.error());
  return make_minter_factory(*spec, std::move(options));
}

}  // namespace courier::auth
