// channel.hpp — the child's side of the framed conversation: say things, and
// ask the parent (mint, check) and wait for its one answer.
#pragma once

#include <optional>
#include <string>

#include "protocol/messages.hpp"
#include "courier/result.hpp"

namespace courier::child {

class LeaseWatch;

class Channel {
 public:
  // `lease`: when the job has a lease bound, the watch that owns reading
  // the parent's frames (L2); null: frames are read from in_fd here.
  Channel(int in_fd, int out_fd, LeaseWatch* lease = nullptr) : in_(in_fd), out_(out_fd), lease_(lease) {}

  // Errors: os_error, frame errors.
  Result<void> send(const protocol::ChildMessage& m);
  // Asks for a token for one leg. The answer is the header line, or an
  // error: invalid_value with the parent's refusal reason.
  Result<std::string> mint(const protocol::Mint& request);
  // Asks whether this delivery still owns its turn; at protocol::kCheckPost
  // also whether the POST may begin (the parent journals post_started
  // first, J1), naming the ref's advertised old id. The grant's answer is
  // the proxy's credentials for the leg about to start, when the parent has
  // any (a "Proxy-Authorization: ..." line), else nothing. Errors:
  // invalid_value with the parent's reason when refused.
  Result<std::optional<std::string>> check(const std::string& phase, protocol::OldOids old_oids = {});

 private:
  Result<protocol::ParentMessage> receive();
  int in_;
  int out_;
  LeaseWatch* lease_;
};

}  // namespace courier::child
