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

Result<PushRequest> build_push_request(const Advertisement& adv, std::string_view ref, std::string_view new_oid,
                                       bool remote_progress) {
  if (!is_valid_oid(new_oid) || is_zero_oid(new_oid)) {
    return fail(Errc::invalid_argument, "new object id \"" + wire::printable(new_oid) + "\" is not a 40-hex sha1 id");
  }
  if (!is_valid_push_refname(ref)) {
    return fail(Errc::invalid_argument, "\"" + wire::printable(ref) + "\" is not a valid ref name under refs/");
  }
  const Capabilities& offered = adv.capabilities;
  if (!offered.has("report-status")) {
    return fail(Errc::capability_missing,
                "the remote does not offer report-status, so a push to it could not be confirmed");
  }

  PushRequest req;
  req.old_oid = std::string(adv.oid_of(ref));
  req.new_oid = std::string(new_oid);
  req.ref = std::string(ref);
  if (req.old_oid == req.new_oid) {
    return fail(Errc::invalid_argument, req.ref + " is already at " + req.new_oid + "; there is nothing to push");
  }

  req.capabilities.emplace_back("report-status");
  if (offered.has("side-band-64k")) {
    req.capabilities.emplace_back("side-band-64k");
    req.side_band = true;
  }
  if (offered.has("quiet") && !remote_progress) req.capabilities.emplace_back("quiet");
  // parse_advertisement already refused any object-format but sha1.
  if (offered.has("object-format")) req.capabilities.emplace_back("object-format=sha1");
  if (offered.has("agent")) req.capabilities.emplace_back("agent=" + courier_agent());

  std::string line = req.old_oid + ' ' + req.new_oid + ' ' + req.ref + '\0';
  for (std::size_t i = 0; i < req.capabilities.size(); ++i) {
    if (i > 0) line += ' ';
    line += req.capabilities[i];
  }
  auto pkt = encode_pkt(line);
  if (!pkt) return tl::unexpected<Error>(pkt.error());
  req.body_prefix = std::move(*pkt);
  req.body_prefix.append(kFlushPkt);
  return req;
}

}  // namespace courier::transport
