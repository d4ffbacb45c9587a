// checked_parts.hpp — what validate() read from a request, kept beside it
// so that no later layer reads it again: the remote taken apart once by the
// one URL owner (wire::parse_remote: canonical form, lane key, user name;
// H2), the proxy split once into what the child may know and what stays
// here (T1), the request's updates, and the judged fields as they were, so
// that a request changed after its validation is noticed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "courier/courier.hpp"
#include "wire/proxy.hpp"
#include "wire/remote.hpp"

namespace courier {

struct CheckedParts {
  wire::Remote remote;
  std::optional<wire::Proxy> proxy;
  std::vector<RefUpdate> updates;
  std::vector<std::string> push_options;
  Atomicity atomic = Atomicity::automatic;
  // The judged fields as validate() saw them.
  std::string repo;
  std::string remote_text;
  std::optional<std::string> proxy_text;
  bool allow_http_loopback = false;
  bool has_ssh_key = false;  // an ssh remote needs one, an http(s) one refuses one
  std::string known_hosts;
  std::string ssh_program;

  // Whether `request` still says what was judged (string comparisons only:
  // nothing is parsed again).
  bool still_describes(const DeliveryRequest& request) const;
};

}  // namespace courier
