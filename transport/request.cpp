// request.cpp — building the receive-pack command and capability request.
#include "transport/request.hpp"

#include "transport/oid.hpp"
#include "transport/pktline.hpp"
#include "transport/refname.hpp"
#include "wire/text.hpp"

#ifndef COURIER_VERSION
#error "COURIER_VERSION must be defined by the build"
#endif

namespace courier::transport {

std::string courier_agent() { return std::string("git-courier/") + COURIER_VERSION; }

Result<void> check_requested_capabilities(const Capabilities& offered, const RequestOptions& options) {
  if (options.atomic && !offered.has("atomic")) {
    return fail(Errc::capability_missing,
                "the remote does not offer atomic, so these refs cannot move together; nothing was sent "
                "(push them with --no-atomic, or Atomicity::non_atomic, to let each succeed or fail on its own)");
  }
  if (!options.push_options.empty() && !offered.has("push-options")) {
    return fail(Errc::capability_missing,
                "the remote does not offer push-options (git's receive.advertisePushOptions), so the push options "
                "cannot reach it; nothing was sent");
  }
  return {};
}

namespace {

// The commands, each checked: a valid new id, a valid ref named once, a
// move (a ref already at its new id needs no command), a deletion only
// where the server allows one.
Result<std::vector<PushRequest::Command>> commands_of(const Advertisement& adv, const std::vector<RefCommand>& wanted) {
  if (wanted.empty()) return fail(Errc::invalid_argument, "no ref to update; there is nothing to push");
  std::vector<PushRequest::Command> out;
  for (const RefCommand& c : wanted) {
    if (!is_valid_oid(c.new_oid)) {
      return fail(Errc::invalid_argument,
                  "new object id \"" + wire::printable(c.new_oid) + "\" is not a 40-hex sha1 id");
    }
    if (!is_valid_push_refname(c.ref)) {
      return fail(Errc::invalid_argument, "\"" + wire::printable(c.ref) + "\" is not a valid ref name under refs/");
    }
    for (const auto& earlier : out) {
      if (earlier.ref == c.ref) return fail(Errc::invalid_argument, c.ref + " is updated twice in one request");
    }
    PushRequest::Command cmd{std::string(adv.oid_of(c.ref)), c.new_oid, c.ref};
    if (cmd.old_oid == cmd.new_oid) {
      return fail(Errc::invalid_argument, cmd.ref + " is already at " + cmd.new_oid + "; there is nothing to push");
    }
    if (is_zero_oid(cmd.new_oid) && !adv.capabilities.has("delete-refs")) {
      return fail(Errc::capability_missing, "the remote does not support deleting refs (" + cmd.ref + ")");
    }
    out.push_back(std::move(cmd));
  }
  return out;
}

}  // namespace

Result<PushRequest> build_push_request(const Advertisement& adv, const std::vector<RefCommand>& wanted,
                                       const RequestOptions& options) {
  const Capabilities& offered = adv.capabilities;
  if (!offered.has("report-status")) {
    return fail(Errc::capability_missing,
                "the remote does not offer report-status, so a push to it could not be confirmed");
  }
  if (auto ok = check_requested_capabilities(offered, options); !ok) return tl::unexpected(ok.error());
  auto commands = commands_of(adv, wanted);
  if (!commands) return tl::unexpected(commands.error());

  PushRequest req;
  req.commands = std::move(*commands);
  for (const auto& c : req.commands) req.pack = req.pack || !is_zero_oid(c.new_oid);
  req.capabilities.emplace_back("report-status");
  if (offered.has("side-band-64k")) {
    req.capabilities.emplace_back("side-band-64k");
    req.side_band = true;
  }
  if (offered.has("quiet") && !options.remote_progress) req.capabilities.emplace_back("quiet");
  if (options.atomic) req.capabilities.emplace_back("atomic");
  if (!options.push_options.empty()) req.capabilities.emplace_back("push-options");
  // parse_advertisement already refused any object-format but sha1.
  if (offered.has("object-format")) req.capabilities.emplace_back("object-format=sha1");
  if (offered.has("agent")) req.capabilities.emplace_back("agent=" + courier_agent());

  for (std::size_t i = 0; i < req.commands.size(); ++i) {
    const auto& c = req.commands[i];
    std::string line = c.old_oid + ' ' + c.new_oid + ' ' + c.ref;
    if (i == 0) {
      line += '\0';
      for (std::size_t k = 0; k < req.capabilities.size(); ++k) line += (k > 0 ? " " : "") + req.capabilities[k];
    }
    auto pkt = encode_pkt(line);
    if (!pkt) return tl::unexpected<Error>(pkt.error());
    req.body_prefix += *pkt;
  }
  req.body_prefix.append(kFlushPkt);
  if (!options.push_options.empty()) {
    for (const auto& o : options.push_options) {
      if (o.find('\n') != std::string::npos) {
        return fail(Errc::invalid_argument, "a push option contains a newline; git refuses those");
      }
      auto pkt = encode_pkt(o);
      if (!pkt) return tl::unexpected<Error>(pkt.error());
      req.body_prefix += *pkt;
    }
    req.body_prefix.append(kFlushPkt);
  }
  return req;
}

}  // namespace courier::transport
