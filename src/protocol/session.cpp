// session.cpp — the parent-side protocol state machine.
#include "protocol/session.hpp"

namespace courier::protocol {

namespace {
// A name from the child as it may appear in an error: at most 64 bytes, cut
// on a UTF-8 character boundary.
std::string capped(const std::string& text) {
  constexpr std::size_t kMax = 64;
  if (text.size() <= kMax) return text;
  std::size_t n = kMax;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n) + "...";
}
}  // namespace

Result<void> ParentSession::violation(Errc code, std::string message) {
  state_ = State::finished;
  return fail(code, std::move(message));
}

Result<void> ParentSession::accept(const ChildMessage& m) {
  if (state_ == State::finished) {
    if (result_seen_ && std::holds_alternative<ResultMsg>(m)) {
      return violation(Errc::second_result, "the child sent a second result");
    }
    return violation(Errc::message_after_result, std::string("the child sent '") + type_name(m) + "' after its result");
  }
  if (const auto* hello = std::get_if<Hello>(&m)) {
    if (state_ != State::awaiting_hello) return violation(Errc::second_hello, "the child sent a second hello");
    if (hello->version != config_.version) {
      return violation(Errc::version_mismatch, "the child speaks protocol version " + std::to_string(hello->version) +
                                                   ", expected " + std::to_string(config_.version));
    }
    state_ = State::running;
    return {};
  }
  if (state_ == State::awaiting_hello) {
    return violation(Errc::hello_not_first, std::string("the child sent '") + type_name(m) + "' before hello");
  }
  if (std::holds_alternative<Mint>(m)) {
    if (!config_.authenticated) {
      return violation(Errc::mint_unauthenticated, "the child asked for a token for an unauthenticated job");
    }
    if (mints_ >= config_.max_mints) {
      return violation(Errc::mints_over_cap,
                       "the child asked for more than " + std::to_string(config_.max_mints) + " tokens");
    }
    ++mints_;
    return {};
  }
  if (const auto* r = std::get_if<ResultMsg>(&m)) {
    // Exactly this job's ref and object, whatever the status: a result that
    // names another ref (refs/heads/EVIL), or no object, is not an answer to
    // this job and is never taken as one.
    if (r->ref != config_.gated_ref) {
      return violation(Errc::result_ref_mismatch, "the child reported a result for the ref '" + capped(r->ref) +
                                                      "', but the job's ref is '" + config_.gated_ref + "'");
    }
    if (!r->oid) {
      return violation(Errc::result_oid_mismatch,
                       "the child reported a result that names no object; the gated object is " + config_.gated_oid);
    }
    if (*r->oid != config_.gated_oid) {
      return violation(Errc::result_oid_mismatch, "the child reported a result for " + capped(*r->oid) +
                                                      ", but the gated object is " + config_.gated_oid);
    }
    state_ = State::finished;
    result_seen_ = true;
    return {};
  }
  return {};  // check, progress
}

}  // namespace courier::protocol
