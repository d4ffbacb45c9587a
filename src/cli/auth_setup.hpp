// auth_setup.hpp — the CLI's --auth choice turned into what a delivery
// needs: a mint callback run in this process (the key never reaches the
// child), and what to do once the outcome is known (credential approve or
// reject).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "courier/courier.hpp"

namespace courier::cli {

class AuthSetup {
 public:
  // `deadline` must be no later than the turn's (take it before submit()).
  // Errors: invalid_argument (unknown mode, unreadable or wrong key file).
  static Result<std::unique_ptr<AuthSetup>> from_spec(const std::string& spec, const DeliveryRequest& request,
                                                      MonoNs deadline);

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

}  // namespace courier::cli
