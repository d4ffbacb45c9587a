// auth_setup.hpp — a credential spelling (the CLI's --auth, a service's
// --credential) turned into what one delivery needs: a mint callback run in this process (the key never reaches the
// child), and what to do once the outcome is known (credential approve or
// reject).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "courier/courier.hpp"

namespace courier::auth {

class AuthSetup {
 public:
  // `deadline` must be no later than the turn's (take it before submit()).
  // `what` names the spelling's origin in messages ("--auth").
  // Errors: invalid_argument (unknown mode, unreadable or wrong key file).
  // `on_note`, when given, is a service's log: a repository git refuses
  // for its owner is then set aside (its credential helpers are not run)
  // and the note says so; without it that repository is refused.
  static Result<std::unique_ptr<AuthSetup>> from_spec(const std::string& spec, const DeliveryRequest& request,
                                                      MonoNs deadline, const std::string& what = "--auth",
                                                      std::function<void(const std::string&)> on_note = {});

  // The mint callback for DeliveryRequest::mint (null for --auth none).
  MintFn mint() const { return mint_; }
  // For DeliveryRequest::mint_binds_payload: the minter's own answer
  // (key: binds the POST's body hash; bearer and credential do not).
  bool binds_payload() const { return binds_payload_; }
  // For DeliveryRequest::mint_after_challenge: git credential asks its
  // helpers only after a 401 (T2); the other minters mint for every leg.
  bool after_challenge() const { return after_challenge_; }
  // After the outcome: tells a credential helper whether it worked, as git
  // does: approve when the remote took it, reject only when it answered 401
  // (a 403 says who you are was accepted and the account lacks rights: the
  // credential is kept).
  void after(const Outcome& o);

 private:
  MintFn mint_;
  bool binds_payload_ = false;
  bool after_challenge_ = false;
  std::function<void(bool accepted)> settle_;
};

}  // namespace courier::auth
