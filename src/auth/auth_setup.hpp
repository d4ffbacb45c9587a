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
  static Result<std::unique_ptr<AuthSetup>> from_spec(const std::string& spec, const DeliveryRequest& request,
                                                      MonoNs deadline, const std::string& what = "--auth");

  // The mint callback for DeliveryRequest::mint (null for --auth none).
  MintFn mint() const { return mint_; }
  // For DeliveryRequest::mint_binds_payload: the minter's own answer
  // (key: binds the POST's body hash; bearer and credential do not).
  bool binds_payload() const { return binds_payload_; }
  // After the outcome: tells a credential helper whether it worked.
  void after(const Outcome& o);

 private:
  MintFn mint_;
  bool binds_payload_ = false;
  std::function<void(bool accepted)> settle_;
};

}  // namespace courier::auth
