// conversation.hpp — the conversation with the child: frames both ways (P1)
// through the protocol session, host calls (mint, check) answered off the
// drive loop (A2, A3), the stderr relay, and backpressure, so that a child
// that floods or never reads cannot stall the supervisor (P2).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "protocol/frame.hpp"
#include "protocol/messages.hpp"
#include "protocol/session.hpp"
#include "supervisor/child_process.hpp"
#include "supervisor/host_calls.hpp"
#include "supervisor/phases_seen.hpp"
#include "supervisor/verdict.hpp"
#include "sys/events.hpp"

namespace courier::supervisor {

class Conversation {
 public:
  // What the conversation asks of the loop that drives it.
  class Driver {
   public:
    // A kill was sent to the domain: drain what is left, ask nothing more.
    virtual bool stopping() const = 0;
    // Kill and confirm for a protocol fault (the conversation keeps the first).
    virtual void fault_stop(const std::string& why) = 0;
    // Authority said no: revoke the delivery (A4).
    virtual void revoke(std::string why) = 0;
    virtual bool revoked() = 0;
    // The child said hello; the child sent its result.
    virtual void hello_received() = 0;
    virtual void result_received() = 0;
    virtual ~Driver() = default;
  };

  // Tags of the conversation's descriptors in the drive loop's epoll.
  static constexpr std::uint64_t kTagStdout = 16;
  static constexpr std::uint64_t kTagStderr = 17;
  static constexpr std::uint64_t kTagStdin = 18;

  // All references outlive this object; `wake` is the loop's, signalled by
  // host-call answers.
  Conversation(Driver& driver, Observed& obs, const CurrentOptions& opts, const sys::Epoll& epoll, HostNotifier& notes,
               std::shared_ptr<sys::EventFd> wake);

  // Takes the parent's ends of the child's stdio and registers them,
  // non-blocking, with the loop. False when they cannot be watched.
  bool attach(ChildChannel channel);
  // The session for this delivery's job (a warm child's is bound later).
  void start_session(const protocol::Job& job);
  void bind_session(const protocol::Job& job);

  // Queues one message (with a descriptor to pass, on a socket) and writes
  // what the child will take now.
  void queue(const protocol::ParentMessage& m, int pass_fd = -1);
  // stdin is writable: write more.
  void flush();
  // Reads the child's stdout and interprets whole frames.
  void on_stdout();
  // Drains the child's stderr and relays it up to its cap.
  void on_stderr();
  // Host-call answers came back: reply to the child.
  void on_host_answers();
  // Reads stdout again (after backpressure, or to drain it to EOF at a stop).
  void resume_stdout();
  // From our kill until the leader's reap: the child's pipes out of the
  // loop's epoll (see Supervisor's stop), and back in. take_back_pipes is
  // false when one could not be watched again.
  void hold_pipes();
  bool take_back_pipes();

  bool reading_stdout() const { return static_cast<bool>(from_child_); }
  bool reading_stderr() const { return static_cast<bool>(child_err_); }
  const std::optional<std::string>& fault() const { return fault_; }
  const std::optional<protocol::ResultMsg>& result() const { return result_; }
  sys::MonoNs result_ns() const { return result_ns_; }
  // The result came after the delivery's revocation (result_first said no).
  bool result_after_revocation() const { return result_after_revocation_; }
  std::optional<std::uint64_t> upload_done() const { return phases_.upload_done(); }
  // The delivery stopped at `stop`: the phases still open end there.
  void close_phases(sys::MonoNs stop) { phases_.close(stop, obs_.out); }

 private:
  struct Outgoing {
    std::string bytes;
    int pass_fd = -1;  // a descriptor to pass with the first byte (the lane lock)
    bool is_job = false;
  };

  const SupervisorOptions& opt() const { return opts_.get(); }
  void protocol_fault(const std::string& why);
  void closed_by_child();
  void apply_backpressure();
  bool host_queue_full() const;
  void process_frames();
  void handle(const protocol::ChildMessage& msg);
  void relay_progress(const protocol::Progress& p);
  void on_hello(const protocol::Hello& h);
  void on_mint(const protocol::Mint& m);
  void on_check(const protocol::Check& c);
  void answer_mint(HostAnswer& a);
  void answer_check(HostAnswer& a);
  void post_cleared();
  void unqueued(const char* what, const std::string& key);
  void ensure_host();

  Driver& driver_;
  Observed& obs_;
  const CurrentOptions& opts_;
  const sys::Epoll& epoll_;
  HostNotifier& notes_;
  std::shared_ptr<sys::EventFd> wake_;
  std::unique_ptr<HostCalls> host_;

  sys::ScopedFd to_child_;    // the child's stdin
  sys::ScopedFd from_child_;  // the child's stdout
  sys::ScopedFd child_err_;   // the child's stderr

  protocol::FrameDecoder decoder_;
  std::optional<protocol::ParentSession> session_;
  std::deque<Outgoing> outbound_;
  sys::MonoNs job_queued_ = 0;
  std::size_t outbound_offset_ = 0;
  std::size_t outbound_bytes_ = 0;
  bool stdout_paused_ = false;
  bool stdout_finished_ = false;  // EOF on stdout and every whole frame before it taken
  bool writing_ = false;
  bool pipes_held_ = false;  // hold_pipes: out of the epoll until take_back_pipes

  std::optional<protocol::ResultMsg> result_;
  bool result_after_revocation_ = false;
  sys::MonoNs result_ns_ = 0;
  // What the frames said of the phases (old id, pack engine, the last
  // upload progress, when each phase began): when no result comes (a kill
  // at the deadline, a revocation, a fault after the POST began) it is
  // what the outcome says of them.
  PhasesSeen phases_;
  std::optional<std::string> fault_;  // protocol fault, first one wins
};

}  // namespace courier::supervisor
