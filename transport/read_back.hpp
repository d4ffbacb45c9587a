// read_back.hpp — one look at a remote ref after a delivery (J2): a single
// advertisement GET with the transport rules of a leg (T1, T2), parsed for
// one ref. An observation, never a verdict.
#pragma once

#include <optional>
#include <string>

#include "courier/result.hpp"
#include "sys/clock.hpp"

namespace courier::transport {

struct ReadRefOptions {
  std::string remote;  // canonical remote URL
  std::string ref;
  std::optional<std::string> authorization;  // a whole header line, or none
  std::optional<std::string> ca_file;
  std::optional<std::string> proxy;                // http://host:port, as LegOptions::proxy
  std::optional<std::string> proxy_authorization;  // a whole header line, or none
  bool allow_http_loopback = false;
  sys::MonoNs deadline = 0;  // the read-back's own budget, never a turn's
};

// The ref's id as the remote advertises it now (40 zeros: absent).
// Errors: those of perform_leg, bad_content_type, advertisement_malformed.
Result<std::string> read_ref(const ReadRefOptions& options);

}  // namespace courier::transport
