// channel.cpp — the child's framed request/answer channel.
#include "child/channel.hpp"

#include "child/lease_watch.hpp"
#include "protocol/frame.hpp"

namespace courier::child {

Result<void> Channel::send(const protocol::ChildMessage& m) {
  auto body = protocol::encode(m);
  if (!body) return tl::unexpected(body.error());
  return protocol::write_frame(out_, *body);
}

Result<protocol::ParentMessage> Channel::receive() {
  if (lease_) return lease_->receive();
  auto frame = protocol::read_frame(in_);
  if (!frame) return tl::unexpected(frame.error());
  if (!*frame) return fail(Errc::frame_truncated_length, "the parent closed the channel");
  return protocol::decode_parent(**frame);
}

Result<std::string> Channel::mint(const protocol::Mint& request) {
  if (auto s = send(request); !s) return tl::unexpected(s.error());
  auto reply = receive();
  if (!reply) return tl::unexpected(reply.error());
  const auto* minted = std::get_if<protocol::Minted>(&*reply);
  if (!minted || minted->leg != request.leg) {
    return fail(Errc::invalid_value, "the parent answered a mint with something else");
  }
  if (minted->refused) return fail(Errc::invalid_value, "no token: " + *minted->refused);
  return *minted->header;
}

Result<std::optional<std::string>> Channel::check(const std::string& phase, protocol::OldOids old_oids) {
  if (auto s = send(protocol::Check{phase, std::move(old_oids)}); !s) return tl::unexpected(s.error());
  auto reply = receive();
  if (!reply) return tl::unexpected(reply.error());
  const auto* a = std::get_if<protocol::Authority>(&*reply);
  if (!a || a->phase != phase) return fail(Errc::invalid_value, "the parent answered a check with something else");
  if (!a->ok)
    return fail(Errc::invalid_value, "the parent refused at " + phase + ": " + a->reason.value_or("no reason"));
  return a->proxy_authorization;
}

}  // namespace courier::child
