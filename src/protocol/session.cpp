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

// Exactly this job's refs, in its order, whatever the status: a result that
// names another ref (refs/heads/EVIL) or leaves one out is not an answer to
// this job and is never taken as one. T4 for every ref: delivered only when
// each is ok or up to date (at least one ok), up_to_date only when each is.
Result<void> ParentSession::check_result(const ResultMsg& r) {
  const auto& want = config_.gated_refs;
  for (std::size_t i = 0; i < r.refs.size() || i < want.size(); ++i) {
    if (i < r.refs.size() && i < want.size() && r.refs[i].ref == want[i]) continue;
    const std::string got = i < r.refs.size() ? "'" + capped(r.refs[i].ref) + "'" : "nothing";
    const std::string expected = i < want.size() ? "'" + want[i] + "'" : "nothing";
    return violation(Errc::result_ref_mismatch, "the child reported " + got + " as ref " + std::to_string(i + 1) +
                                                    " of its result, but the job's is " + expected);
  }
  std::size_t ok = 0;
  std::size_t current = 0;
  for (const RefResult& x : r.refs) {
    ok += x.status == RefStatus::ok ? 1 : 0;
    current += x.status == RefStatus::up_to_date ? 1 : 0;
  }
  const bool all_done = ok + current == r.refs.size();
  if ((r.status == wire::DeliveryStatus::delivered && !(all_done && ok > 0)) ||
      (r.status == wire::DeliveryStatus::up_to_date && current != r.refs.size())) {
    return violation(Errc::result_ref_mismatch, std::string("the child reported ") +
                                                    std::string(wire::status_word(r.status)) +
                                                    " while not every ref of its result says so");
  }
  return {};
}

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
    if (auto ok = check_result(*r); !ok) return ok;
    state_ = State::finished;
    result_seen_ = true;
    return {};
  }
  return {};  // check, progress
}

}  // namespace courier::protocol
