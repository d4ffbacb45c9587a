// push_leg.hpp — what carries a delivery's two legs, chosen once per job:
// smart HTTP, two requests each with its own token (T1–T3, push_http.cpp), or
// one ssh connection to git-receive-pack (T5, push_ssh.cpp). Either way the
// stages around them are the same (push.cpp): the advertisement parsed by
// one parser, the request built by one builder, the report read by one
// reader and judged by one rule (T4).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "child/channel.hpp"
#include "courier/result.hpp"
#include "protocol/messages.hpp"
#include "sys/fd.hpp"
#include "transport/advertisement.hpp"
#include "transport/request.hpp"
#include "wire/status.hpp"

namespace courier::child {

// How a leg ended the delivery: its status and words.
struct LegStop {
  wire::DeliveryStatus status = wire::DeliveryStatus::failed;
  std::string reason;
};
template <class T>
using LegStep = tl::expected<T, LegStop>;

inline tl::unexpected<LegStop> leg_stop(wire::DeliveryStatus status, std::string reason) {
  return tl::unexpected(LegStop{status, std::move(reason)});
}

// The update's bytes: the request's prefix (commands, capabilities), then
// the pack, either spooled (fd and len, with the digest a token binds) or
// streamed from the pack engine as it is built (source; no length, no
// digest).
struct PostBody {
  transport::PushRequest request;
  sys::ScopedFd fd;
  std::string body_sha256;  // spooled: of the whole body, prefix and pack
  std::uint64_t body_len = 0;
  std::function<Result<std::size_t>(char*, std::size_t)> source;
};

// What the upload leg gets from the delivery.
struct UploadIo {
  const PostBody& body;
  // The point of no return (J1): asked right before the first byte of the
  // update commands leaves; the parent journals post_started before it
  // answers. Its answer: the proxy's credentials for the leg, if any.
  std::function<LegStep<std::optional<std::string>>()> post_gate;
  // How much of the body has left (sent, total; total 0 while unknown).
  std::function<void(std::uint64_t, std::uint64_t)> on_upload;
  // The remote's answer as it arrives (the report-status stream).
  std::function<Result<void>(std::string_view)> on_response;
};

class PushLeg {
 public:
  virtual ~PushLeg() = default;
  // Leg 1: authority asked ("advertisement"), then the advertisement's
  // bytes, for transport::parse_advertisement in form().
  virtual LegStep<std::string> advertise() = 0;
  virtual transport::AdvertisementForm form() const = 0;
  // Leg 2, at most once: post_gate, then the body sent and the answer
  // given to on_response to its end. Returns the bytes sent.
  virtual LegStep<std::uint64_t> upload(UploadIo& io) = 0;
};

// The job's leg: ssh when job.ssh is set, else smart HTTP.
std::unique_ptr<PushLeg> make_http_leg(const protocol::Job& job, Channel& ch);
std::unique_ptr<PushLeg> make_ssh_leg(const protocol::Job& job, Channel& ch);

}  // namespace courier::child
