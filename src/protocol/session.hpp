// session.hpp — the parent's view of the conversation with one child, as a
// pure state machine (no I/O), so every violation can be tested directly.
//
//   awaiting_hello --hello--> running --result--> finished
//
// hello must come first, exactly once, with our version; mint is allowed only
// for an authenticated job and at most kMaxMints times; result comes once,
// after hello, and names exactly the job's refs, in the job's order (a
// result for anything else, or one that leaves a ref out, is never taken as
// this job's), and says delivered only when every ref is ok or up to date
// (T4); nothing may follow it.
#pragma once

#include <string>
#include <vector>

#include "protocol/messages.hpp"
#include "courier/result.hpp"

namespace courier::protocol {

class ParentSession {
 public:
  struct Config {
    bool authenticated = false;
    int max_mints = kMaxMints;
    int version = kProtocolVersion;
    // The job's refs, in its order: a result must name exactly these.
    std::vector<std::string> gated_refs;
  };

  enum class State { awaiting_hello, running, finished };

  explicit ParentSession(Config config) : config_(std::move(config)) {}

  // Accepts or rejects one message from the child. Errors (each its own
  // kind): hello_not_first, second_hello, version_mismatch,
  // mint_unauthenticated, mints_over_cap, result_ref_mismatch (a ref
  // other than the job's, one left out, or a status its refs contradict),
  // second_result, message_after_result. After an error the session is
  // finished: the supervisor treats any error as a protocol fault.
  Result<void> accept(const ChildMessage& m);

  // A warm child says hello before it has a job: its refs and whether it
  // may mint are bound when the job is assigned.
  void bind(std::vector<std::string> gated_refs, bool authenticated) {
    config_.gated_refs = std::move(gated_refs);
    config_.authenticated = authenticated;
  }

  State state() const { return state_; }
  int mints() const { return mints_; }

 private:
  Result<void> violation(Errc code, std::string message);
  Result<void> check_result(const ResultMsg& r);

  Config config_;
  State state_ = State::awaiting_hello;
  int mints_ = 0;
  bool result_seen_ = false;
};

}  // namespace courier::protocol
