// request.hpp — the receive-pack POST body, up to the pack.
//
// The body is one command pkt-line per ref, `<old> <new> <ref>`, the first
// followed by `\0<capabilities>`, a flush, then (with push options) one
// pkt-line per option and a flush, then the pack (none when every command
// deletes). Each old id is taken from the advertisement, not from the
// caller, so the command states exactly what the server showed us (T4): if
// the ref moved since, receive-pack refuses instead of overwriting. Only
// capabilities the server advertised are asked for, and only those
// git-courier understands: report-status (without it nothing proves the
// update happened, so its absence is an error), atomic and push-options
// (asked for by the caller: their absence is an error too, never a silent
// downgrade), side-band-64k, quiet (unless the caller wants the remote's
// progress), object-format=sha1 and agent.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "wire/legs.hpp"
#include "courier/result.hpp"
#include "transport/advertisement.hpp"

namespace courier::transport {

inline constexpr std::string_view kReceivePackRequestType = wire::leg_spec(wire::Leg::receive_pack).request_type;

// One ref to update: its new id (the zero id deletes it). The old id is
// the advertisement's.
struct RefCommand {
  std::string ref;
  std::string new_oid;
};

struct PushRequest {
  std::string body_prefix;  // commands + flush (+ push options + flush); the caller appends the pack
  struct Command {
    std::string old_oid;  // as advertised; kZeroOid creates the ref
    std::string new_oid;  // kZeroOid deletes it
    std::string ref;
  };
  std::vector<Command> commands;          // in the order sent
  std::vector<std::string> capabilities;  // as sent, in order
  bool side_band = false;                 // the response is side-band-64k multiplexed
  bool pack = false;                      // a pack follows (some command does not delete)
};

// What the caller asks of the request beyond its commands.
struct RequestOptions {
  // `quiet` is not asked for, so the remote sends its progress on side-band
  // 2 (hook output comes either way).
  bool remote_progress = false;
  // All commands or none (receive-pack's `atomic`).
  bool atomic = false;
  // Sent after the commands (receive-pack's `push-options`).
  std::vector<std::string> push_options;
};

// The agent string sent to servers: "git-courier/<COURIER_VERSION>".
std::string courier_agent();

// What the caller's options need that the server does not offer, checked
// before anything is sent: capability_missing naming it (atomic,
// push-options), else ok.
Result<void> check_requested_capabilities(const Capabilities& offered, const RequestOptions& options);

// Builds the request that moves each ref from its advertised id to its new
// id. Errors: invalid_argument (no command, a new id not 40 lowercase hex,
// a ref not a valid name under refs/ or named twice, a ref already at its
// new id: there is nothing to send for it, a push option with a newline),
// capability_missing (the server does not offer report-status, or what
// check_requested_capabilities refuses; a deletion without delete-refs).
Result<PushRequest> build_push_request(const Advertisement& adv, const std::vector<RefCommand>& commands,
                                       const RequestOptions& options = {});

}  // namespace courier::transport
