// request.hpp — the receive-pack POST body, up to the pack.
//
// The body is one command pkt-line, `<old> <new> <ref>\0<capabilities>`,
// a flush, then the pack. The old id is taken from the advertisement, not
// from the caller, so the command states exactly what the server showed us
// (T4): if the ref moved since, receive-pack refuses instead of overwriting.
// Only capabilities the server advertised are asked for, and only those
// git-courier understands: report-status (without it nothing proves the
// update happened, so its absence is an error), side-band-64k, quiet
// (unless the caller wants the remote's progress), object-format=sha1 and
// agent.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "wire/legs.hpp"
#include "courier/result.hpp"
#include "transport/advertisement.hpp"

namespace courier::transport {

inline constexpr std::string_view kReceivePackRequestType = wire::leg_spec(wire::Leg::receive_pack).request_type;

struct PushRequest {
  std::string body_prefix;  // command pkt-line + flush; the caller appends the pack
  std::string old_oid;      // as advertised; kZeroOid creates the ref
  std::string new_oid;
  std::string ref;
  std::vector<std::string> capabilities;  // as sent, in order
  bool side_band = false;                 // the response is side-band-64k multiplexed
};

// The agent string sent to servers: "git-courier/<COURIER_VERSION>".
std::string courier_agent();

// Builds the request that moves `ref` from its advertised id to `new_oid`.
// Errors: invalid_argument (new_oid not 40 lowercase hex or zero, ref not a
// valid name under refs/, or the ref already at new_oid: there is nothing
// to send), capability_missing (the server does not offer report-status).
// remote_progress: `quiet` is not asked for, so the remote sends its
// progress on side-band 2 (hook output comes either way).
Result<PushRequest> build_push_request(const Advertisement& adv, std::string_view ref, std::string_view new_oid,
                                       bool remote_progress = false);

}  // namespace courier::transport
