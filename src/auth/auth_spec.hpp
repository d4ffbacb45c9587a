// auth_spec.hpp — how a delivery's credentials are named on the command line
// and in host configuration, and the minter factory each name stands for:
//
//   none            no Authorization header at all
//   key:FILE        Ed25519 private key (PEM); per-leg signed tokens
//   credential      git credential helpers, run in the parent; HTTP Basic
//   bearer:FILE     a static bearer token read from FILE
//   ssh-key:FILE    an SSH private key as ssh-keygen writes it, for ssh
//                   remotes only (A5): no minter (nothing goes in an HTTP
//                   header); the key rides in DeliveryRequest::ssh_key and
//                   the parent's agent signs with it
//
// Files are checked when the spec is parsed into a factory, so a typo or a
// wrong key fails before any delivery starts.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "auth/credential_minter.hpp"
#include "auth/minter.hpp"
#include "courier/result.hpp"

namespace courier::auth {

struct AuthSpec {
  enum class Kind { none, key, credential, bearer, ssh_key };
  Kind kind = Kind::none;
  std::string file;  // key, bearer, ssh_key: the file, made absolute

  // Whether the spec is for ssh remotes (ssh-key:FILE) rather than http(s).
  bool for_ssh() const { return kind == Kind::ssh_key; }
};

// Errors: invalid_argument ("unknown auth 'x'", "key: needs a file", ...).
Result<AuthSpec> parse_auth_spec(std::string_view text);

// Makes the minter for one delivery; a null minter means "no credentials".
using MinterFactory = std::function<Result<std::shared_ptr<Minter>>(const MintContext&)>;

struct FactoryOptions {
  CredentialMinterOptions credential;  // for `credential`
};

// Loads and checks what the spec names: the key (missing file, unreadable,
// not a PEM private key, not Ed25519), the bearer token file (missing,
// unreadable, empty). An ssh-key spec makes no minter and loads nothing
// here: its holder loads the key (load_ssh_key; the command line asks for
// a passphrase) into DeliveryRequest::ssh_key. A bearer file is read again for each delivery, so a
// rotated token is picked up. Errors: invalid_argument naming the problem.
Result<MinterFactory> make_minter_factory(const AuthSpec& spec, FactoryOptions options = {});

// parse_auth_spec, then make_minter_factory.
Result<MinterFactory> minter_factory(std::string_view text, FactoryOptions options = {});

}  // namespace courier::auth
