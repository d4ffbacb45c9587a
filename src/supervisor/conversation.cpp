// conversation.cpp — the conversation: frames, session, host calls,
// backpressure, and the stderr relay.
#include "supervisor/conversation.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "sys/io.hpp"
#include "sys/unix_socket.hpp"

namespace courier::supervisor {

namespace {

// Keys in the observer queue: numeric progress is coalesced per phase (the
// newest waiting update of a phase wins, so every phase still shows its
// last count), stderr chunks waiting in a row are joined, and so are the
// remote's message lines (text, never dropped for being many: they are
// what a person needs to read, e.g. why a hook refused).
constexpr std::uint64_t kKeyStderr = 2;
constexpr std::uint64_t kKeyRemote = 3;

std::uint64_t progress_key(const std::string& phase) {
  return std::hash<std::string>{}(phase) | (std::uint64_t{1} << 63);
}

constexpr std::size_t kReadChunk = 64 * 1024;

}  // namespace

namespace {

std::vector<std::string> job_refs(const protocol::Job& job) {
  std::vector<std::string> refs;
  for (const RefUpdate& u : job.updates) refs.push_back(u.ref);
  return refs;
}

}  // namespace

Conversation::Conversation(Driver& driver, Observed& obs, const CurrentOptions& opts, const sys::Epoll& epoll,
                           HostNotifier& notes, std::shared_ptr<sys::EventFd> wake)
    : driver_(driver), obs_(obs), opts_(opts), epoll_(epoll), notes_(notes), wake_(std::move(wake)) {}

bool Conversation::attach(ChildChannel channel) {
  to_child_ = std::move(channel.to_child);
  from_child_ = std::move(channel.from_child);
  child_err_ = std::move(channel.child_err);
  return sys::set_nonblocking(to_child_.get()) && sys::set_nonblocking(from_child_.get()) &&
         sys::set_nonblocking(child_err_.get()) && epoll_.add(from_child_.get(), sys::kReadable, kTagStdout) &&
         epoll_.add(child_err_.get(), sys::kReadable, kTagStderr) && epoll_.add(to_child_.get(), 0, kTagStdin);
}

void Conversation::start_session(const protocol::Job& job) {
  protocol::ParentSession::Config sc;
  sc.gated_refs = job_refs(job);
  sc.authenticated = job.authenticated;
  session_.emplace(sc);
  PhasesSeen::on_job(job, obs_.out);
}

void Conversation::bind_session(const protocol::Job& job) {
  session_->bind(job_refs(job), job.authenticated);
  PhasesSeen::on_job(job, obs_.out);
}

void Conversation::protocol_fault(const std::string& why) {
  if (!fault_) fault_ = why;
  driver_.fault_stop("protocol fault: " + why);
}

// ---- writing --------------------------------------------------------------

void Conversation::queue(const protocol::ParentMessage& m, int pass_fd) {
  auto body = protocol::encode(m);
  if (!body) {
    protocol_fault(std::string("cannot encode '") + protocol::type_name(m) + "': " + body.error().message);
    return;
  }
  if (opt().on_frame) opt().on_frame(true, *body);
  auto frame = protocol::encode_frame(*body);
  if (!frame) {
    protocol_fault(std::string("cannot frame '") + protocol::type_name(m) + "': " + frame.error().message);
    return;
  }
  outbound_bytes_ += frame->size();
  const bool is_job = std::holds_alternative<protocol::Job>(m);
  if (is_job) job_queued_ = sys::mono_now_ns();
  outbound_.push_back(Outgoing{std::move(*frame), pass_fd, is_job});
  flush();
}

// EPIPE: the child closed its stdin (or died). Nothing more can be said to
// it; that alone is not a fault.
void Conversation::closed_by_child() {
  (void)epoll_.remove(to_child_.get());
  to_child_.reset();
  outbound_.clear();
  outbound_bytes_ = 0;
  outbound_offset_ = 0;
  writing_ = false;
}

void Conversation::flush() {
  while (!outbound_.empty() && to_child_) {
    Outgoing& entry = outbound_.front();
    const std::string& f = entry.bytes;
    auto n = (entry.pass_fd >= 0 && outbound_offset_ == 0)
                 ? sys::send_with_fd(to_child_.get(), f.data(), f.size(), entry.pass_fd)
                 : sys::write_nonblocking(to_child_.get(), f.data() + outbound_offset_, f.size() - outbound_offset_);
    if (!n) {
      closed_by_child();
      return;
    }
    if (*n == 0) break;
    outbound_offset_ += *n;
    if (outbound_offset_ == f.size()) {
      if (entry.is_job) obs_.out.timings.job_sent = sys::mono_now_ns();
      outbound_bytes_ -= f.size();
      outbound_.pop_front();
      outbound_offset_ = 0;
    }
  }
  const bool want = !outbound_.empty() && to_child_;
  if (want != writing_ && to_child_) {
    writing_ = want;
    (void)epoll_.modify(to_child_.get(), want ? std::uint32_t{sys::kWritable} : 0u, kTagStdin);
  }
  apply_backpressure();
}

// P2: a child that does not read our replies, or floods requests, is not
// read further until it catches up; the deadline bounds the wait.
void Conversation::apply_backpressure() {
  if (driver_.stopping()) return;
  const bool full = outbound_bytes_ > kMaxOutboundBytes || (host_ && host_->pending() >= HostCalls::kMaxPending);
  if (full && !stdout_paused_ && from_child_) {
    stdout_paused_ = true;
    (void)epoll_.modify(from_child_.get(), 0, kTagStdout);
  } else if (!full) {
    resume_stdout();
  }
}

void Conversation::resume_stdout() {
  if (stdout_paused_ && from_child_) {
    stdout_paused_ = false;
    (void)epoll_.modify(from_child_.get(), sys::kReadable, kTagStdout);
  }
}

// While held, the modifications above fail on the absent descriptors and
// only their flags change; take_back_pipes registers each as they say.
void Conversation::hold_pipes() {
  if (pipes_held_) return;
  pipes_held_ = true;
  if (from_child_) (void)epoll_.remove(from_child_.get());
  if (child_err_) (void)epoll_.remove(child_err_.get());
  if (to_child_) (void)epoll_.remove(to_child_.get());
}

bool Conversation::take_back_pipes() {
  if (!pipes_held_) return true;
  pipes_held_ = false;
  const std::uint32_t out = stdout_paused_ ? 0u : std::uint32_t{sys::kReadable};
  const std::uint32_t in = writing_ ? std::uint32_t{sys::kWritable} : 0u;
  return (!from_child_ || epoll_.add(from_child_.get(), out, kTagStdout)) &&
         (!child_err_ || epoll_.add(child_err_.get(), sys::kReadable, kTagStderr)) &&
         (!to_child_ || epoll_.add(to_child_.get(), in, kTagStdin));
}

// ---- reading --------------------------------------------------------------

void Conversation::on_stdout() {
  char buf[kReadChunk];
  auto r = sys::read_nonblocking(from_child_.get(), buf, sizeof buf);
  if (!r) {
    obs_.unconfirm(OutcomeKind::cleanup_unobserved, "reading the child's stdout failed: " + r.error().message);
    return;
  }
  if (r->status == sys::ReadStatus::would_block) return;
  if (r->status == sys::ReadStatus::eof) {
    obs_.out.child.stdout_eof = true;
    obs_.out.timings.stdout_eof = sys::mono_now_ns();
    (void)epoll_.remove(from_child_.get());
    from_child_.reset();
    process_frames();
    return;
  }
  decoder_.feed(buf, r->bytes);
  process_frames();
}

// True while the host-call queue cannot take another request (and no stop
// has begun: once it has, frames are drained and nothing is asked).
bool Conversation::host_queue_full() const {
  return !driver_.stopping() && host_ && host_->pending() >= HostCalls::kMaxPending;
}

// Interprets the frames read so far, in order. While the host-call queue
// is full the rest wait in the decoder (its memory is bounded: stdout is
// not read meanwhile) and are taken up again when answers come back, so a
// mint or check is never dropped for want of room (P2).
void Conversation::process_frames() {
  for (;;) {
    if (host_queue_full()) return;
    auto frame = decoder_.next();
    if (!frame) {
      if (!fault_) protocol_fault(frame.error().message);
      return;
    }
    if (!*frame) break;
    if (opt().on_frame) opt().on_frame(false, **frame);
    if (fault_) continue;  // stopping for a fault: drain, do not interpret
    auto msg = protocol::decode_child(**frame);
    if (!msg) {
      protocol_fault(msg.error().message);
      continue;
    }
    if (auto ok = session_->accept(*msg); !ok) {
      protocol_fault(ok.error().message);
      continue;
    }
    handle(*msg);
  }
  // At EOF, once every whole frame has been taken: anything left is a
  // frame cut short.
  if (obs_.out.child.stdout_eof && !stdout_finished_) {
    stdout_finished_ = true;
    if (auto fin = decoder_.finish(); !fin && !fault_) protocol_fault(fin.error().message);
  }
}

void Conversation::handle(const protocol::ChildMessage& msg) {
  if (job_queued_ != 0 && obs_.out.timings.job_accepted == 0 && !std::holds_alternative<protocol::Hello>(msg)) {
    obs_.out.timings.job_accepted = sys::mono_now_ns();
  }
  if (const auto* h = std::get_if<protocol::Hello>(&msg)) {
    on_hello(*h);
  } else if (const auto* m = std::get_if<protocol::Mint>(&msg)) {
    on_mint(*m);
  } else if (const auto* c = std::get_if<protocol::Check>(&msg)) {
    on_check(*c);
  } else if (const auto* p = std::get_if<protocol::Progress>(&msg)) {
    phases_.on_progress(*p, sys::mono_now_ns(), obs_.out);
    if (opt().on_progress) relay_progress(*p);
  } else if (const auto* res = std::get_if<protocol::ResultMsg>(&msg)) {
    result_ = *res;
    result_ns_ = sys::mono_now_ns();
    if (opt().result_first && !opt().result_first()) result_after_revocation_ = true;
    driver_.result_received();
  }
}

// The child's progress to the host's observer, off the drive loop. A
// remote message line travels as text (joined with the lines waiting
// before it, one line per '\n': the child escaped every control byte), and
// comes out again as one progress call per line.
void Conversation::relay_progress(const protocol::Progress& p) {
  const auto& observer = opt().on_progress;
  if (p.phase == "remote" && p.message) {
    auto sink = [observer](std::string_view text) {
      while (!text.empty()) {
        const std::size_t end = text.find('\n');
        observer(protocol::Progress{"remote", 0, 0, std::string(text.substr(0, end))});
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
      }
    };
    (void)notes_.post_text(kKeyRemote, std::move(sink), *p.message + "\n");
    return;
  }
  (void)notes_.post([observer, p] { observer(p); }, progress_key(p.phase));
}

void Conversation::on_hello(const protocol::Hello& h) {
  driver_.hello_received();
  obs_.out.timings.hello = sys::mono_now_ns();
  obs_.out.child_argv = h.argv;
  obs_.out.child_env_keys = h.env_keys;
  if (h.fds) obs_.out.child_fds = *h.fds;
  if (h.pid != obs_.out.child.pid) protocol_fault("hello names pid " + std::to_string(h.pid) + ", not the child's");
}

// ---- host calls -----------------------------------------------------------

void Conversation::ensure_host() {
  if (!host_) host_ = std::make_unique<HostCalls>(wake_);
}

// HostCalls::submit said no: a request that cannot be queued is never
// answered, and a check is never taken as granted. process_frames keeps
// the queue from overflowing, so reaching this means more requests in
// flight than the protocol allows a child (the real one has at most one):
// a protocol fault, killed and confirmed.
void Conversation::unqueued(const char* what, const std::string& key) {
  protocol_fault(std::string("the host-call queue is full (") + std::to_string(HostCalls::kMaxPending) +
                 " requests in flight): the child's " + what + " '" + key + "' was not queued, and is not granted");
}

void Conversation::on_mint(const protocol::Mint& m) {
  if (driver_.stopping()) return;
  if (!opt().mint) {
    queue(protocol::Minted{m.leg, std::nullopt, "this delivery has no minter"});
    return;
  }
  ensure_host();
  auto mint = opt().mint;
  auto authority = opt().authority;
  const auto fence = opt().fence;
  auto before_revoke = opt().before_authority_revoke;
  const bool queued =
      host_->submit(HostRequest::Kind::mint, m.leg, [mint, authority, m, fence, before_revoke](HostAnswer& a) {
        MintRequest request = protocol::to_mint_request(m);
        request.fence = fence;  // L3: every mint carries the lease's fence
        MintAnswer minted = mint(request);
        a.header = std::move(minted.header);
        a.refusal = std::move(minted.refused);
        a.ok = a.header.has_value();
        a.foreign = minted.foreign;
        a.revoked_after = minted.revoked && !a.ok;
        // A3: ask again after the minter returned; a token minted for a
        // delivery revoked meanwhile never leaves this process.
        if (a.ok && authority) {
          AuthorityAnswer again = authority("mint");
          if (!again.ok) {
            a.header.reset();
            a.ok = false;
            a.revoked_after = true;
            a.refusal = again.reason;
          }
        }
        if (a.revoked_after && !a.foreign) {
          a.revoke_words = "authority revoked while minting: " + a.refusal;
          // J1: the intent is durable (within its bound) before the loop kills.
          if (before_revoke) before_revoke(a.revoke_words);
        }
      });
  if (!queued) unqueued("mint for the leg", m.leg);
  apply_backpressure();
}

void Conversation::on_check(const protocol::Check& c) {
  if (driver_.stopping()) return;
  const bool post = c.phase == protocol::kCheckPost;
  if (post) PhasesSeen::on_post_check(c, obs_.out);
  auto before_post = post ? opt().before_post : nullptr;
  if (!opt().authority && !before_post) {
    if (post) post_cleared();
    queue(protocol::Authority{c.phase, true, std::nullopt, opt().proxy_authorization});
    return;
  }
  ensure_host();
  auto authority = opt().authority;
  auto before_revoke = opt().before_authority_revoke;
  const bool queued =
      host_->submit(HostRequest::Kind::check, c.phase,
                    [authority, before_post, before_revoke, phase = c.phase, post_check = c](HostAnswer& a) {
                      AuthorityAnswer ans = authority ? authority(phase) : AuthorityAnswer{true, {}};
                      a.ok = ans.ok;
                      a.refusal = ans.reason;
                      if (!a.ok) {
                        a.revoke_words = "authority refused at " + phase + (a.refusal.empty() ? "" : ": " + a.refusal);
                        // J1: durable (within its bound) before the loop kills.
                        if (before_revoke) before_revoke(a.revoke_words);
                      }
                      // J1: durable before the child hears it may begin the POST.
                      if (a.ok && before_post) {
                        if (auto durable = before_post(post_check); !durable) {
                          a.ok = false;
                          a.not_durable = durable.error().message;
                        }
                      }
                    });
  if (!queued) unqueued("check at", c.phase);
  apply_backpressure();
}

// J2: from here the remote_effect is at least possible.
void Conversation::post_cleared() {
  obs_.out.timings.post_started = sys::mono_now_ns();
  phases_.on_post(obs_.out.timings.post_started);
}

void Conversation::answer_mint(HostAnswer& a) {
  if (a.foreign) {
    protocol_fault("the child asked for a token for a foreign destination: " + a.refusal);
  } else if (a.revoked_after) {
    driver_.revoke(a.revoke_words);
  } else if (a.header) {
    queue(protocol::Minted{a.key, std::move(a.header), std::nullopt});
  } else {
    queue(protocol::Minted{a.key, std::nullopt, a.refusal.empty() ? "refused" : a.refusal});
  }
}

void Conversation::answer_check(HostAnswer& a) {
  if (!a.not_durable.empty()) {
    // The POST is refused and nothing of it was sent: the child reports
    // the failure itself (remote_effect none).
    queue(protocol::Authority{a.key, false, "post_started could not be journalled: " + a.not_durable});
  } else if (a.ok) {
    // The POST is cleared from here (remote_effect at least possible).
    if (a.key == protocol::kCheckPost) post_cleared();
    queue(protocol::Authority{a.key, true, std::nullopt, opt().proxy_authorization});
  } else {
    // A refusal ends the delivery: tell the child, then revoke.
    queue(protocol::Authority{a.key, false, a.refusal.empty() ? "authority refused" : a.refusal});
    driver_.revoke(a.revoke_words);
  }
}

void Conversation::on_host_answers() {
  if (!host_) return;
  for (auto& a : host_->take_answers()) {
    if (driver_.stopping() || driver_.revoked()) continue;  // never write a token after a stop began
    if (a.kind == HostRequest::Kind::mint) {
      answer_mint(a);
    } else {
      answer_check(a);
    }
  }
  apply_backpressure();
  process_frames();  // frames that waited for room in the host-call queue
}

// ---- stderr ---------------------------------------------------------------

void Conversation::on_stderr() {
  char buf[kReadChunk];
  auto r = sys::read_nonblocking(child_err_.get(), buf, sizeof buf);
  if (!r) {
    obs_.unconfirm(OutcomeKind::cleanup_unobserved, "reading the child's stderr failed: " + r.error().message);
    return;
  }
  if (r->status == sys::ReadStatus::would_block) return;
  if (r->status == sys::ReadStatus::eof) {
    obs_.out.child.stderr_eof = true;
    obs_.out.timings.stderr_eof = sys::mono_now_ns();
    (void)epoll_.remove(child_err_.get());
    child_err_.reset();
    return;
  }
  const std::size_t room = kStderrRelayCap - std::min<std::size_t>(kStderrRelayCap, obs_.out.stderr_relayed);
  const std::size_t relay = std::min(room, r->bytes);
  bool queued = true;
  if (relay > 0) {
    const std::string_view text(buf, relay);
    std::function<void(std::string_view)> sink = opt().on_stderr;
    if (!sink) {
      sink = [](std::string_view t) { std::fprintf(stderr, "%.*s", static_cast<int>(t.size()), t.data()); };
    }
    queued = notes_.post_text(kKeyStderr, std::move(sink), text);
  }
  obs_.out.stderr_relayed += queued ? relay : 0;
  obs_.out.stderr_dropped += r->bytes - (queued ? relay : 0);
}

}  // namespace courier::supervisor
