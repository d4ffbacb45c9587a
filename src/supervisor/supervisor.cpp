// supervisor.cpp — spawn, drive loop, deadline, kill/reap/EOF, outcome.
#include "supervisor/supervisor.hpp"

#include <sys/epoll.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>

#include "protocol/frame.hpp"
#include "protocol/session.hpp"
#include "supervisor/host_calls.hpp"
#include "supervisor/kill_domain.hpp"
#include "supervisor/killer.hpp"
#include "supervisor/strays.hpp"
#include "sys/cgroup.hpp"
#include "sys/events.hpp"
#include "sys/io.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"
#include "sys/unix_socket.hpp"
#include "wire/child_argv.hpp"

namespace courier::supervisor {

namespace {

std::atomic<std::uint64_t> g_unconfirmed{0};
std::atomic<std::uint64_t> g_sequence{0};

enum Tag : std::uint64_t { kTagWake = 1, kTagDeadline, kTagBound, kTagPidfd, kTagStdout, kTagStderr, kTagStdin, kTagCgroup };

// Keys in the observer queue: numeric progress is coalesced (the newest
// waiting update wins), stderr chunks waiting in a row are joined.
constexpr std::uint64_t kKeyProgress = 1;
constexpr std::uint64_t kKeyStderr = 2;

constexpr std::size_t kReadChunk = 64 * 1024;

// Scratch directories are named after the host's pid, so that the ones a
// host killed with SIGKILL left behind (it could not remove them) are removed
// by the next host on the machine.
std::string make_scratch_dir() {
  const char* env = std::getenv("TMPDIR");
  const std::string base = env && *env ? env : "/tmp";
  const std::string prefix = "git-courier-scratch-";
  static std::once_flag swept;
  std::call_once(swept, [&] {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(prefix, 0) != 0) continue;
      const long pid = std::atol(name.c_str() + prefix.size());
      if (pid > 0 && !sys::pid_exists(static_cast<pid_t>(pid))) std::filesystem::remove_all(e.path(), ec);
    }
  });
  std::string tmpl = base + "/" + prefix + std::to_string(sys::self_pid()) + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return {};
  return tmpl;
}

OutcomeKind kind_from_status(const std::string& status) {
  if (status == "delivered") return OutcomeKind::delivered;
  if (status == "up_to_date") return OutcomeKind::up_to_date;
  if (status == "rejected") return OutcomeKind::rejected;
  if (status == "auth_failed") return OutcomeKind::auth_failed;
  if (status == "transport_failed") return OutcomeKind::transport_failed;
  return OutcomeKind::failed;
}

}  // namespace

std::uint64_t unconfirmed_children() { return g_unconfirmed.load(); }

Result<std::string> resolve_child_program(const std::string& override_path) {
  if (override_path.empty()) return std::string("/proc/self/exe");
  if (override_path.front() != '/') {
    return fail(Errc::invalid_argument, "child program override must be an absolute path: '" + override_path + "'");
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(override_path, ec)) {
    return fail(Errc::invalid_argument, "child program override is not an existing file: '" + override_path + "'");
  }
  return override_path;
}

std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (auto name : kChildEnvAllowlist) {
    const std::string key(name);
    if (const char* v = std::getenv(key.c_str())) env.push_back(key + "=" + v);
  }
  return env;
}

// Everything one run of the drive loop owns.
struct Supervisor::Loop {
  Supervisor& sup;
  std::reference_wrapper<const SupervisorOptions> optr;
  const SupervisorOptions& opt() const { return optr.get(); }
  Outcome out;

  std::shared_ptr<sys::EventFd> wake;
  sys::Epoll epoll;
  sys::TimerFd deadline_timer;
  sys::TimerFd bound_timer;
  sys::MonoNs bound_armed_at = 0;
  std::optional<sys::Cgroup> cgroup;
  sys::Spawned child;
  std::shared_ptr<KillDomain> domain;
  std::unique_ptr<DeadlineKiller> killer;
  std::unique_ptr<HostCalls> host;
  std::string scratch;

  sys::ScopedFd to_child;    // child's stdin
  sys::ScopedFd from_child;  // child's stdout
  sys::ScopedFd child_err;   // child's stderr

  protocol::FrameDecoder decoder;
  std::optional<protocol::ParentSession> session;
  struct Outgoing {
    std::string bytes;
    int pass_fd = -1;    // a descriptor to pass with the first byte (the lane lock)
    bool is_job = false;
  };
  std::deque<Outgoing> outbound;
  bool socket_channel = false;
  sys::MonoNs job_queued = 0;
  std::size_t outbound_offset = 0;
  std::size_t outbound_bytes = 0;
  bool stdout_paused = false;
  bool stdout_finished = false;  // EOF on stdout and every whole frame before it taken
  bool writing = false;

  std::optional<protocol::ResultMsg> result;
  sys::MonoNs result_ns = 0;
  // The last upload progress: bytes of the POST body the child had handed
  // to its connection. When no result comes (a kill at the deadline, a
  // revocation, a fault after the POST began) it is what the outcome says
  // about bytes that may have reached the remote (a lower bound).
  std::optional<std::uint64_t> upload_done;
  std::optional<std::string> fault;        // protocol fault, first one wins
  std::optional<OutcomeKind> unconfirmed;  // set when confirmation failed
  // Subreaping: this process is a child subreaper, so the delivery's orphans
  // come back to it; the leader's start time tells them from older children.
  bool subreaping = false;
  unsigned long long leader_start_ticks = 0;
  std::string unconfirmed_reason;
  bool done = false;

  // The host's observers run here, off the loop (D2, S4): the loop only
  // queues, and a host callback that blocks holds nothing of ours.
  HostNotifier notes;

  Loop(Supervisor& s, const SupervisorOptions& o) : sup(s), optr(o) {}

  // run() returns once the observers have had what was queued for them, or
  // after kObserverDrainBound, never past the D4 instant of a delivery.
  ~Loop() {
    sys::MonoNs until = sys::mono_now_ns() + kObserverDrainBound;
    if (out.deadline != 0) until = std::min(until, out.deadline + opt().reap_bound + opt().eof_bound);
    (void)notes.drain_until(until);
  }

  void event(const std::string& line) {
    if (opt().on_event) (void)notes.post([f = opt().on_event, line] { f(line); });
  }

  void spawned_observed() {
    if (opt().on_spawned) (void)notes.post([f = opt().on_spawned, pid = child.pid] { f(pid); });
  }

  // ---- stopping -------------------------------------------------------
  void stop(StopCause cause, const std::string& why) {
    if (domain->kill(cause)) event("killed child " + std::to_string(child.pid) + ": " + why);
    resume_stdout();  // drain to EOF whatever the child left behind
    update_bound();
  }

  void protocol_fault(const std::string& why) {
    if (!fault) fault = why;
    stop(StopCause::protocol_fault, "protocol fault: " + why);
  }

  void set_unconfirmed(OutcomeKind k, const std::string& why) {
    if (!unconfirmed) {
      unconfirmed = k;
      unconfirmed_reason = why;
    }
    done = true;
  }

  // The one timer for bounds: REAP_BOUND after the first kill, EOF_BOUND
  // after the reap, the result grace after a result.
  void update_bound() {
    sys::MonoNs at = 0;
    if (domain->reaped()) {
      at = out.timings.reaped + opt().eof_bound;
    } else if (domain->first_kill_ns() != 0) {
      at = domain->first_kill_ns() + opt().reap_bound;
    } else if (result_ns != 0) {
      at = result_ns + kResultExitGrace;
    }
    if (at != 0 && at != bound_armed_at) {
      bound_armed_at = at;
      (void)bound_timer.arm_at(at);
    }
  }

  void on_bound() {
    if (!bound_timer.drain()) return;
    const sys::MonoNs now = sys::mono_now_ns();
    if (now < bound_armed_at) return;
    if (domain->reaped()) {
      if (!out.child.stdout_eof || !out.child.stderr_eof) {
        set_unconfirmed(OutcomeKind::cleanup_unbounded,
                        "end-of-file not seen on the child's " +
                            std::string(!out.child.stdout_eof ? "stdout" : "stderr") + " within EOF_BOUND (" +
                            std::to_string(opt().eof_bound / sys::kNsPerMs) +
                            " ms) after the reap: a process outside the kill domain holds it");
      } else if (cgroup && !out.child.cgroup_empty) {
        set_unconfirmed(OutcomeKind::domain_populated, "the child's cgroup " + cgroup->path() +
                                                           " was still populated EOF_BOUND after the kill");
      }
    } else if (domain->first_kill_ns() != 0) {
      set_unconfirmed(OutcomeKind::unreaped, "the child " + std::to_string(child.pid) +
                                                 " did not exit within REAP_BOUND (" +
                                                 std::to_string(opt().reap_bound / sys::kNsPerMs) +
                                                 " ms) after SIGKILL");
    } else if (result_ns != 0) {
      stop(StopCause::after_result, "it sent its result but did not exit");
    }
  }

  // ---- writing --------------------------------------------------------
  void queue(const protocol::ParentMessage& m, int pass_fd = -1) {
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
    outbound_bytes += frame->size();
    const bool is_job = std::holds_alternative<protocol::Job>(m);
    if (is_job) job_queued = sys::mono_now_ns();
    outbound.push_back(Outgoing{std::move(*frame), pass_fd, is_job});
    flush();
  }

  void flush() {
    while (!outbound.empty() && to_child) {
      Outgoing& entry = outbound.front();
      const std::string& f = entry.bytes;
      auto n = (entry.pass_fd >= 0 && outbound_offset == 0)
                   ? sys::send_with_fd(to_child.get(), f.data(), f.size(), entry.pass_fd)
                   : sys::write_nonblocking(to_child.get(), f.data() + outbound_offset, f.size() - outbound_offset);
      if (!n) {
        // EPIPE: the child closed its stdin (or died). Nothing more can be
        // said to it; that alone is not a fault.
        (void)epoll.remove(to_child.get());
        to_child.reset();
        outbound.clear();
        outbound_bytes = 0;
        outbound_offset = 0;
        writing = false;
        return;
      }
      if (*n == 0) break;
      outbound_offset += *n;
      if (outbound_offset == f.size()) {
        if (entry.is_job) out.timings.job_sent = sys::mono_now_ns();
        outbound_bytes -= f.size();
        outbound.pop_front();
        outbound_offset = 0;
      }
    }
    const bool want = !outbound.empty() && to_child;
    if (want != writing && to_child) {
      writing = want;
      (void)epoll.modify(to_child.get(), want ? std::uint32_t{EPOLLOUT} : 0u, kTagStdin);
    }
    apply_backpressure();
  }

  // P2: a child that does not read our replies, or floods requests, is not
  // read further until it catches up; the deadline bounds the wait.
  void apply_backpressure() {
    if (domain->first_kill_ns() != 0) return;
    const bool full = outbound_bytes > kMaxOutboundBytes || (host && host->pending() >= HostCalls::kMaxPending);
    if (full && !stdout_paused && from_child) {
      stdout_paused = true;
      (void)epoll.modify(from_child.get(), 0, kTagStdout);
    } else if (!full) {
      resume_stdout();
    }
  }

  void resume_stdout() {
    if (stdout_paused && from_child) {
      stdout_paused = false;
      (void)epoll.modify(from_child.get(), EPOLLIN, kTagStdout);
    }
  }

  // ---- reading --------------------------------------------------------
  void on_stdout() {
    char buf[kReadChunk];
    auto r = sys::read_nonblocking(from_child.get(), buf, sizeof buf);
    if (!r) {
      set_unconfirmed(OutcomeKind::cleanup_unobserved, "reading the child's stdout failed: " + r.error().message);
      return;
    }
    if (r->status == sys::ReadStatus::would_block) return;
    if (r->status == sys::ReadStatus::eof) {
      out.child.stdout_eof = true;
      (void)epoll.remove(from_child.get());
      from_child.reset();
      process_frames();
      return;
    }
    decoder.feed(buf, r->bytes);
    process_frames();
  }

  // True while the host-call queue cannot take another request (and no stop
  // has begun: once it has, frames are drained and nothing is asked).
  bool host_queue_full() const {
    return domain->first_kill_ns() == 0 && host && host->pending() >= HostCalls::kMaxPending;
  }

  // Interprets the frames read so far, in order. While the host-call queue
  // is full the rest wait in the decoder (its memory is bounded: stdout is
  // not read meanwhile) and are taken up again when answers come back, so a
  // mint or check is never dropped for want of room (P2).
  void process_frames() {
    for (;;) {
      if (host_queue_full()) return;
      auto frame = decoder.next();
      if (!frame) {
        if (!fault) protocol_fault(frame.error().message);
        return;
      }
      if (!*frame) break;
      if (opt().on_frame) opt().on_frame(false, **frame);
      if (fault) continue;  // stopping for a fault: drain, do not interpret
      auto msg = protocol::decode_child(**frame);
      if (!msg) {
        protocol_fault(msg.error().message);
        continue;
      }
      if (auto ok = session->accept(*msg); !ok) {
        protocol_fault(ok.error().message);
        continue;
      }
      handle(*msg);
    }
    // At EOF, once every whole frame has been taken: anything left is a
    // frame cut short.
    if (out.child.stdout_eof && !stdout_finished) {
      stdout_finished = true;
      if (auto fin = decoder.finish(); !fin && !fault) protocol_fault(fin.error().message);
    }
  }

  // HostCalls::submit said no: a request that cannot be queued is never
  // answered, and a check is never taken as granted. process_frames keeps
  // the queue from overflowing, so reaching this means more requests in
  // flight than the protocol allows a child (the real one has at most one):
  // a protocol fault, killed and confirmed.
  void unqueued(const char* what, const std::string& key) {
    protocol_fault(std::string("the host-call queue is full (") + std::to_string(HostCalls::kMaxPending) +
                   " requests in flight): the child's " + what + " '" + key + "' was not queued, and is not granted");
  }

  void handle(const protocol::ChildMessage& msg) {
    if (job_queued != 0 && out.timings.job_accepted == 0 && !std::holds_alternative<protocol::Hello>(msg)) {
      out.timings.job_accepted = sys::mono_now_ns();
    }
    if (const auto* h = std::get_if<protocol::Hello>(&msg)) {
      sup.ready_ = true;
      if (opt().on_ready) opt().on_ready();
      out.timings.hello = sys::mono_now_ns();
      out.child_argv = h->argv;
      out.child_env_keys = h->env_keys;
      if (h->fds) out.child_fds = *h->fds;
      if (h->pid != child.pid) protocol_fault("hello names pid " + std::to_string(h->pid) + ", not the child's");
    } else if (const auto* m = std::get_if<protocol::Mint>(&msg)) {
      on_mint(*m);
    } else if (const auto* c = std::get_if<protocol::Check>(&msg)) {
      on_check(*c);
    } else if (const auto* p = std::get_if<protocol::Progress>(&msg)) {
      if (p->phase == "upload") upload_done = p->done;
      if (opt().on_progress) {
        (void)notes.post([f = opt().on_progress, p = *p] { f(p); }, p->message ? std::uint64_t{0} : kKeyProgress);
      }
    } else if (const auto* res = std::get_if<protocol::ResultMsg>(&msg)) {
      result = *res;
      result_ns = sys::mono_now_ns();
      update_bound();
    }
  }

  void ensure_host() {
    if (!host) host = std::make_unique<HostCalls>(wake);
  }

  void on_mint(const protocol::Mint& m) {
    if (domain->first_kill_ns() != 0) return;
    if (!opt().mint) {
      queue(protocol::Minted{m.leg, std::nullopt, "this delivery has no minter"});
      return;
    }
    ensure_host();
    auto mint = opt().mint;
    auto authority = opt().authority;
    const bool queued = host->submit(HostRequest::Kind::mint, m.leg, [mint, authority, m](HostAnswer& a) {
      MintAnswer minted = mint(protocol::to_mint_request(m));
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
    });
    if (!queued) unqueued("mint for the leg", m.leg);
    apply_backpressure();
  }

  void on_check(const protocol::Check& c) {
    if (domain->first_kill_ns() != 0) return;
    if (!opt().authority) {
      queue(protocol::Authority{c.phase, true, std::nullopt});
      return;
    }
    ensure_host();
    auto authority = opt().authority;
    const bool queued = host->submit(HostRequest::Kind::check, c.phase, [authority, phase = c.phase](HostAnswer& a) {
      AuthorityAnswer ans = authority(phase);
      a.ok = ans.ok;
      a.refusal = ans.reason;
    });
    if (!queued) unqueued("check at", c.phase);
    apply_backpressure();
  }

  void on_host_answers() {
    if (!host) return;
    for (auto& a : host->take_answers()) {
      if (domain->first_kill_ns() != 0 || sup_revoked()) continue;  // never write a token after a stop began
      if (a.kind == HostRequest::Kind::mint) {
        if (a.foreign) {
          protocol_fault("the child asked for a token for a foreign destination: " + a.refusal);
          continue;
        }
        if (a.revoked_after) {
          sup.revoke("authority revoked while minting: " + a.refusal);
          continue;
        }
        if (a.header) {
          queue(protocol::Minted{a.key, std::move(a.header), std::nullopt});
        } else {
          queue(protocol::Minted{a.key, std::nullopt, a.refusal.empty() ? "refused" : a.refusal});
        }
      } else {
        if (a.ok) {
          queue(protocol::Authority{a.key, true, std::nullopt});
        } else {
          // A refusal ends the delivery: tell the child, then revoke.
          queue(protocol::Authority{a.key, false, a.refusal.empty() ? "authority refused" : a.refusal});
          sup.revoke("authority refused at " + a.key + (a.refusal.empty() ? "" : ": " + a.refusal));
        }
      }
    }
    apply_backpressure();
    process_frames();  // frames that waited for room in the host-call queue
  }

  // Warm mode: the job arrived (on the wake eventfd). From here the child is
  // this delivery's: its deadline, its killer, its callbacks, its lane lock.
  void take_assignment() {
    std::optional<SupervisorOptions> next;
    {
      std::lock_guard<std::mutex> lock(sup.mu_);
      if (!sup.pending_) return;
      next = std::move(sup.pending_);
      sup.pending_.reset();
    }
    {
      std::lock_guard<std::mutex> lock(sup.mu_);
      sup.assigned_ = std::make_unique<SupervisorOptions>(std::move(*next));
    }
    optr = *sup.assigned_;
    out.warm = true;
    out.deadline = opt().deadline;
    out.timings.assigned = sys::mono_now_ns();
    auto started = DeadlineKiller::start(domain, opt().deadline, wake);
    if (!started) {
      domain->kill(StopCause::deadline);
      event("cannot start the deadline killer: " + started.error().message);
    } else {
      killer = std::move(*started);
    }
    (void)deadline_timer.arm_at(opt().deadline);
    session->bind(opt().job.ref, opt().job.oid, opt().job.authenticated);
    spawned_observed();
    protocol::Job job = opt().job;
    job.parent_pid = sys::self_pid();
    job.deadline_mono_ns = opt().deadline;
    job.scratch_dir = scratch;
    queue(job, opt().inherit_fd);
  }

  bool assigned_taken() const { return out.warm; }

  bool sup_revoked() {
    std::lock_guard<std::mutex> lock(sup.mu_);
    return sup.revoked_;
  }

  void on_stderr() {
    char buf[kReadChunk];
    auto r = sys::read_nonblocking(child_err.get(), buf, sizeof buf);
    if (!r) {
      set_unconfirmed(OutcomeKind::cleanup_unobserved, "reading the child's stderr failed: " + r.error().message);
      return;
    }
    if (r->status == sys::ReadStatus::would_block) return;
    if (r->status == sys::ReadStatus::eof) {
      out.child.stderr_eof = true;
      (void)epoll.remove(child_err.get());
      child_err.reset();
      return;
    }
    const std::size_t room = kStderrRelayCap - std::min<std::size_t>(kStderrRelayCap, out.stderr_relayed);
    const std::size_t relay = std::min(room, r->bytes);
    bool queued = true;
    if (relay > 0) {
      const std::string_view text(buf, relay);
      std::function<void(std::string_view)> sink = opt().on_stderr;
      if (!sink) {
        sink = [](std::string_view t) { std::fprintf(stderr, "%.*s", static_cast<int>(t.size()), t.data()); };
      }
      queued = notes.post_text(kKeyStderr, std::move(sink), text);
    }
    out.stderr_relayed += queued ? relay : 0;
    out.stderr_dropped += r->bytes - (queued ? relay : 0);
  }

  void on_pidfd() {
    if (domain->reaped()) return;
    auto exited = sys::has_exited(child.pidfd.get());
    if (!exited) {
      set_unconfirmed(OutcomeKind::wait_failed, "waitid on the child failed: " + exited.error().message);
      return;
    }
    if (!*exited) return;
    out.timings.exited = sys::mono_now_ns();
    // A zombie still has its /proc entry: read its start time before the reap.
    if (auto st = sys::proc_stat(child.pid)) leader_start_ticks = st->start_ticks;
    auto status = domain->kill_group_and_reap();
    if (!status) {
      set_unconfirmed(OutcomeKind::wait_failed, "reaping the child failed: " + status.error().message);
      return;
    }
    out.timings.reaped = sys::mono_now_ns();
    out.child.reaped = true;
    claim_orphans();
    if (status->signal) out.child.signal = status->signal; else out.child.exit_code = status->code;
    (void)epoll.remove(child.pidfd.get());
    resume_stdout();
    update_bound();
  }

  void on_cgroup() {
    auto populated = cgroup->populated();
    if (!populated) {
      set_unconfirmed(OutcomeKind::cleanup_unobserved, "reading cgroup.events failed: " + populated.error().message);
      return;
    }
    out.child.cgroup_empty = !*populated;
  }

  // cgroup.events notifications are rate-limited by the kernel (one per
  // ~10 ms per file), but "populated" itself is updated as each member
  // exits. Once the leader is reaped and both pipes are at EOF, read it now
  // rather than wait for a notification that may lag the fact it reports.
  void settle_cgroup() {
    if (cgroup && !out.child.cgroup_empty && out.child.reaped && out.child.stdout_eof && out.child.stderr_eof) {
      on_cgroup();
    }
  }

  bool confirmed() const {
    return out.child.reaped && out.child.stdout_eof && out.child.stderr_eof && (!cgroup || out.child.cgroup_empty);
  }

  // After the stop: anyone left in the child's process group who is not a
  // zombie? SIGKILL was sent to the group at the leader's exit; wait, on
  // their pidfds, until EOF_BOUND for each to go.
  void census() {
    claim_orphans();
    group_census();
  }

  // Subreaping: a descendant that left the process group and the cgroup
  // and closed its pipes (setsid, a write to another cgroup.procs, a double
  // fork) is invisible to the kill domain, but once its parent died it is
  // our child. Every such orphan is killed and reaped within EOF_BOUND, or
  // the stop is not confirmed. Run at the reap (so that an orphan holding a
  // pipe dies and its end-of-file comes) and again here at the end, for the
  // orphans of group members that died after that.
  void claim_orphans() {
    if (!subreaping) return;
    out.child.subreaped = true;
    // A stray is signalled only now, after the reap: it gets its own
    // REAP_BOUND to die when EOF_BOUND after the reap is nearly spent.
    const sys::MonoNs until = std::max(out.timings.reaped + opt().eof_bound, sys::mono_now_ns() + opt().reap_bound);
    const StrayClaim c = claim_strays(leader_start_ticks, until);
    out.child.strays.insert(out.child.strays.end(), c.reaped.begin(), c.reaped.end());
    if (!c.reaped.empty()) {
      event(std::to_string(c.reaped.size()) + " orphaned descendant(s) of child " + std::to_string(child.pid) +
            " killed and reaped after it");
    }
    if (!c.alive.empty()) {
      out.child.strays.insert(out.child.strays.end(), c.alive.begin(), c.alive.end());
      set_unconfirmed(OutcomeKind::domain_populated,
                      std::to_string(c.alive.size()) +
                          " orphaned descendant(s) of the child still alive EOF_BOUND after the reap (first pid " +
                          std::to_string(c.alive.front()) + ")");
    }
  }

  void group_census() {
    // The common case, an empty group, costs one system call; only a group
    // with members left (zombies count) is worth a scan of /proc.
    if (!sys::group_has_members(child.pid)) return;
    for (pid_t p : sys::pids_in_group(child.pid)) {
      const char st = sys::proc_state(p);
      if (st == 0 || st == 'Z' || st == 'X') continue;
      auto fd = sys::pidfd_open(p);
      if (!fd) continue;  // gone already
      auto ready = sys::wait_readable_until({fd->get()}, out.timings.reaped + opt().eof_bound);
      if (!ready || ready->empty()) out.child.census.push_back(p);
    }
    if (!out.child.census.empty()) {
      set_unconfirmed(OutcomeKind::domain_populated,
                      std::to_string(out.child.census.size()) +
                          " process(es) still alive in the child's process group after the kill");
    }
  }
};

Supervisor::Supervisor(SupervisorOptions options) : opt_(std::move(options)) {}

Supervisor::~Supervisor() {
  if (running_.load()) {
    std::fprintf(stderr, "git-courier: fatal: Supervisor destroyed while its run() is still supervising child %lld\n",
                 static_cast<long long>(child_pid_.load()));
    std::abort();
  }
}

bool Supervisor::assign(SupervisorOptions delivery) {
  std::shared_ptr<void> wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!opt_.warm || revoked_ || finished_ || pending_ || assigned_ || !wake_ || !domain_) return false;
    pending_ = std::move(delivery);
    wake = wake_;
  }
  static_cast<sys::EventFd*>(wake.get())->signal();
  return true;
}

void Supervisor::revoke(std::string reason) {
  std::shared_ptr<KillDomain> domain;
  std::shared_ptr<void> wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!revoked_) {
      revoked_ = true;
      revoke_reason_ = std::move(reason);
      revoke_ns_ = sys::mono_now_ns();
    }
    domain = domain_;
    wake = wake_;
  }
  // Kill from this thread at once: it runs no host code and needs no loop.
  if (domain) domain->kill(StopCause::revoked);
  if (wake) static_cast<sys::EventFd*>(wake.get())->signal();
}

Outcome Supervisor::run() {
  if (ran_) {
    Outcome o;
    o.kind = OutcomeKind::spawn_failed;
    o.reason = "Supervisor::run called twice";
    return o;
  }
  ran_ = true;
  running_ = true;
  struct Running {
    std::atomic<bool>& flag;
    ~Running() { flag = false; }
  } running_guard{running_};

  // A child that closes its stdin makes our next write fail with EPIPE;
  // that must not raise SIGPIPE in the host.
  sys::ScopedSigpipeBlock no_sigpipe;
  Loop L(*this, opt_);
  L.out.deadline = opt_.deadline;
  L.out.timings.submitted = sys::mono_now_ns();
  auto fail_spawn = [&](const std::string& why) {
    L.out.kind = OutcomeKind::spawn_failed;
    L.out.reason = why;
    return L.out;
  };

  auto program = resolve_child_program(opt_.child_program);
  if (!program) return fail_spawn(program.error().message);
  std::string argv0;
  {
    std::error_code ec;
    argv0 = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (!opt_.child_program.empty()) argv0 = opt_.child_program;
    if (argv0.empty()) return fail_spawn("cannot resolve /proc/self/exe");
  }

  auto wake = sys::EventFd::create();
  auto epoll = sys::Epoll::create();
  auto deadline_timer = sys::TimerFd::create();
  auto bound_timer = sys::TimerFd::create();
  auto in = sys::make_pipe();
  auto outp = sys::make_pipe();
  auto errp = sys::make_pipe();
  // A warm child talks over one Unix socket (stdin and stdout both), so that
  // its lane lock can be passed to it later with the job.
  auto sock = opt_.warm ? sys::make_socketpair() : Result<std::pair<sys::ScopedFd, sys::ScopedFd>>();
  if (!wake || !epoll || !deadline_timer || !bound_timer || !in || !outp || !errp || !sock) {
    return fail_spawn("cannot create the supervisor's descriptors");
  }
  L.wake = std::make_shared<sys::EventFd>(std::move(*wake));
  L.epoll = std::move(*epoll);
  L.deadline_timer = std::move(*deadline_timer);
  L.bound_timer = std::move(*bound_timer);

  if (opt_.cgroup != CgroupMode::off) {
    auto parent = sys::Cgroup::find_parent();
    static std::once_flag swept;
    if (parent) std::call_once(swept, [&] { sys::Cgroup::sweep_stale(*parent, "git-courier-"); });
    Result<sys::Cgroup> cg = parent ? sys::Cgroup::create(*parent, "git-courier-" + std::to_string(sys::self_pid()) +
                                                                       "-" + std::to_string(g_sequence++))
                                    : Result<sys::Cgroup>(tl::unexpected(parent.error()));
    if (cg) {
      L.cgroup = std::move(*cg);
      L.out.child.cgroup = true;
    } else if (opt_.cgroup == CgroupMode::required) {
      return fail_spawn("a cgroup was required and none could be made: " + cg.error().message);
    } else {
      L.event("no cgroup for the child, using its process group only: " + cg.error().message);
    }
  }

  if (opt_.subreaper) {
    // Before the spawn: an orphan made at any moment after it comes to us.
    if (auto on = sys::set_child_subreaper(true); on) {
      L.subreaping = true;
    } else {
      L.event("cannot become a child subreaper; the stop is confirmed for the kill domain only: " + on.error().message);
    }
  }

  L.scratch = make_scratch_dir();
  if (L.scratch.empty()) return fail_spawn("cannot create a scratch directory");
  struct ScratchGuard {
    std::string& path;
    ~ScratchGuard() {
      std::error_code ec;
      if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
  } scratch_guard{L.scratch};

  {
    std::lock_guard<std::mutex> lock(mu_);
    if (revoked_) {
      L.out.kind = OutcomeKind::cancelled_no_dispatch;
      L.out.reason = "revoked before dispatch: " + revoke_reason_;
      L.out.timings.revoke = revoke_ns_;
      return L.out;
    }
    wake_ = L.wake;
  }
  if (!opt_.warm && sys::mono_now_ns() >= opt_.deadline) {
    L.out.kind = OutcomeKind::deadline_killed;
    L.out.reason = "the deadline passed before a child was spawned";
    return L.out;
  }

  sys::SpawnSpec spec;
  spec.exec_path = *program;
  spec.argv = {argv0, std::string(wire::kChildWord)};
  spec.env = child_environment();
  spec.stdin_fd = opt_.warm ? sock->second.get() : in->read_end.get();
  spec.stdout_fd = opt_.warm ? sock->second.get() : outp->write_end.get();
  spec.stderr_fd = errp->write_end.get();
  spec.inherit_fd = opt_.warm ? -1 : opt_.inherit_fd;  // a warm child gets its lock with the job
  spec.cgroup_dir_fd = L.cgroup ? L.cgroup->dir_fd() : -1;
  auto spawned = sys::spawn(spec);
  if (!spawned) return fail_spawn(spawned.error().message);
  L.child = std::move(*spawned);
  L.out.dispatched = true;
  L.out.timings.spawned = sys::mono_now_ns();
  L.out.child.pid = L.child.pid;
  child_pid_ = L.child.pid;
  // Our copies of the child's ends: a descendant may keep the pipes open,
  // but we must not be the one who does.
  in->read_end.reset();
  outp->write_end.reset();
  errp->write_end.reset();
  L.to_child = std::move(in->write_end);
  L.from_child = std::move(outp->read_end);
  L.child_err = std::move(errp->read_end);
  if (opt_.warm) {
    sock->second.reset();
    auto reader = sys::dup_at_least(sock->first.get(), 3);
    if (!reader) return fail_spawn(reader.error().message);
    L.from_child = std::move(*reader);
    L.to_child = std::move(sock->first);
    L.socket_channel = true;
  }

  L.domain = std::make_shared<KillDomain>(L.child.pid, L.child.pidfd.get(), L.cgroup ? &*L.cgroup : nullptr);
  bool revoked_now = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    domain_ = L.domain;
    revoked_now = revoked_;
  }
  if (!opt_.warm) L.spawned_observed();
  L.event(std::string(opt_.warm ? "spawned warm child " : "spawned child ") + std::to_string(L.child.pid) + (L.cgroup ? " in cgroup " + L.cgroup->path() : " (process group only)"));

  auto killer = opt_.warm ? Result<std::unique_ptr<DeadlineKiller>>(nullptr)
                          : DeadlineKiller::start(L.domain, opt_.deadline, L.wake);
  if (!killer) {
    // Without an independent killer the deadline could not be kept: stop now.
    L.domain->kill(StopCause::deadline);
    L.event("cannot start the deadline killer: " + killer.error().message);
  } else {
    L.killer = std::move(*killer);
  }
  if (revoked_now) L.domain->kill(StopCause::revoked);

  bool setup_ok = sys::set_nonblocking(L.to_child.get()) && sys::set_nonblocking(L.from_child.get()) &&
                  sys::set_nonblocking(L.child_err.get()) && (opt_.warm || L.deadline_timer.arm_at(opt_.deadline)) &&
                  L.epoll.add(L.wake->fd(), EPOLLIN, kTagWake) &&
                  L.epoll.add(L.deadline_timer.fd(), EPOLLIN, kTagDeadline) &&
                  L.epoll.add(L.bound_timer.fd(), EPOLLIN, kTagBound) &&
                  L.epoll.add(L.child.pidfd.get(), EPOLLIN, kTagPidfd) &&
                  L.epoll.add(L.from_child.get(), EPOLLIN, kTagStdout) &&
                  L.epoll.add(L.child_err.get(), EPOLLIN, kTagStderr) &&
                  L.epoll.add(L.to_child.get(), 0, kTagStdin) &&
                  (!L.cgroup || L.epoll.add(L.cgroup->events_fd(), EPOLLPRI, kTagCgroup));
  if (!setup_ok) {
    L.domain->kill(StopCause::protocol_fault);
    L.set_unconfirmed(OutcomeKind::cleanup_unobserved, "cannot watch the child's descriptors");
  }

  protocol::ParentSession::Config sc;
  sc.gated_oid = opt_.job.oid;
  sc.gated_ref = opt_.job.ref;
  sc.authenticated = opt_.job.authenticated;
  L.session.emplace(sc);

  protocol::Job job = opt_.job;
  job.parent_pid = sys::self_pid();
  job.deadline_mono_ns = opt_.deadline;
  job.scratch_dir = L.scratch;
  if (setup_ok && !opt_.warm) L.queue(job);
  L.update_bound();
  if (L.cgroup) L.on_cgroup();

  while (!L.done) {
    L.settle_cgroup();
    if (L.confirmed()) {
      L.census();
      break;
    }
    auto ready = L.epoll.wait(-1);
    if (!ready) {
      L.domain->kill(StopCause::protocol_fault);
      L.set_unconfirmed(OutcomeKind::cleanup_unobserved, "epoll_wait failed: " + ready.error().message);
      break;
    }
    // Stop decisions first, then the exit, then the pipes.
    for (const auto& r : *ready) {
      if (r.tag == kTagWake) {
        L.wake->drain();
        bool revoked = false;
        std::string why;
        {
          std::lock_guard<std::mutex> lock(mu_);
          revoked = revoked_;
          why = revoke_reason_;
          L.out.timings.revoke = revoke_ns_;
        }
        if (revoked) L.stop(StopCause::revoked, "revoked: " + why);
        if (!revoked && opt_.warm && !L.assigned_taken()) L.take_assignment();
        L.on_host_answers();
        L.resume_stdout();
        L.update_bound();
      } else if (r.tag == kTagDeadline) {
        if (L.deadline_timer.drain()) L.stop(StopCause::deadline, "deadline reached");
      } else if (r.tag == kTagBound) {
        L.on_bound();
      }
    }
    for (const auto& r : *ready) {
      if (L.done) break;
      switch (r.tag) {
        case kTagPidfd: L.on_pidfd(); break;
        case kTagStdout: if (L.from_child) L.on_stdout(); break;
        case kTagStderr: if (L.child_err) L.on_stderr(); break;
        case kTagStdin: L.flush(); break;
        case kTagCgroup: L.on_cgroup(); break;
        default: break;
      }
    }
  }

  L.killer.reset();  // joins: the killer is done before we decide
  {
    // An assignment that arrives from now on is refused; one that arrived
    // but was never taken means this child never had the job.
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    pending_.reset();
  }
  L.out.timings.kill = L.domain->first_kill_ns();
  const StopCause cause = L.domain->first_cause();
  if (L.unconfirmed) {
    g_unconfirmed.fetch_add(1);
    L.out.kind = *L.unconfirmed;
    L.out.reason = L.unconfirmed_reason + "; the seat is retained";
    L.event("UNCONFIRMED stop of child " + std::to_string(L.child.pid) + ": " + L.out.reason);
    return L.out;
  }
  L.out.timings.confirmed = sys::mono_now_ns();
  if (L.cgroup) {
    if (auto rm = L.cgroup->remove(); !rm) L.event("cannot remove the child's cgroup: " + rm.error().message);
  }
  if (L.fault) {
    L.out.kind = OutcomeKind::protocol_fault;
    L.out.reason = *L.fault;
  } else if (L.result && !(cause == StopCause::deadline && L.result_ns >= opt_.deadline &&
                            kind_from_status(L.result->status) != OutcomeKind::delivered &&
                            kind_from_status(L.result->status) != OutcomeKind::up_to_date &&
                            kind_from_status(L.result->status) != OutcomeKind::rejected)) {
    // A failure the child reports at or after the deadline is the deadline's
    // doing (its own timeouts race our kill): that is reported as such below.
    L.out.kind = kind_from_status(L.result->status);
    L.out.reason = L.result->reason.value_or("");
    if (L.result->detail) L.out.reason += ": " + *L.result->detail;
    L.out.old_oid = L.result->old_oid;
    L.out.objects = L.result->objects;
    L.out.bytes_sent = L.result->bytes_sent;
    L.out.advertise_ms = L.result->advertise_ms;
    L.out.pack_ms = L.result->pack_ms;
    L.out.upload_ms = L.result->upload_ms;
  } else if (cause == StopCause::deadline) {
    L.out.kind = OutcomeKind::deadline_killed;
    L.out.reason = "killed at the deadline; stop confirmed";
  } else if (cause == StopCause::revoked) {
    L.out.kind = OutcomeKind::revoked;
    std::lock_guard<std::mutex> lock(mu_);
    L.out.reason = "revoked: " + revoke_reason_ + "; child killed, stop confirmed";
  } else {
    L.out.kind = OutcomeKind::protocol_fault;
    L.out.reason = "the child exited without a result (" +
                   (L.out.child.signal ? "signal " + std::to_string(*L.out.child.signal)
                                       : "exit code " + std::to_string(L.out.child.exit_code.value_or(-1))) +
                   ")";
  }
  if (!L.out.bytes_sent && L.upload_done) L.out.bytes_sent = L.upload_done;
  return L.out;
}

}  // namespace courier::supervisor
