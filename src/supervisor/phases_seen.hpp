// phases_seen.hpp — what the parent learns of a delivery's phases from the
// child's frames as they arrive: the ref's advertised old id, the pack
// engine, the bytes of the POST body handed over, and when each phase began
// and ended. A delivery that ends without a result (a kill at the deadline,
// a revocation, a child that died) still reports them; a result that
// stands replaces them with the child's own figures.
#pragma once

#include <cstdint>
#include <optional>

#include "courier/outcome.hpp"
#include "protocol/messages.hpp"
#include "sys/clock.hpp"

namespace courier::supervisor {

class PhasesSeen {
 public:
  // The job given to the child: `out.refs` names its refs, not attempted
  // until the child says more.
  static void on_job(const protocol::Job& job, Outcome& out);
  // One progress frame, read at `now`: its facts go into `out` (every
  // ref's old id, pack_engine, advertise_ms once the advertisement is done).
  void on_progress(const protocol::Progress& p, sys::MonoNs now, Outcome& out);
  // The child asks to begin the POST, naming the old ids it compares
  // against (kept for refs no advertise frame named): exactly the refs whose
  // commands it sends, which become `unknown` (sent, nothing read) and
  // which the verdict undoes if the POST was never cleared. A check that
  // names no ref at all (the encoding of one ref) sends every ref of the job.
  static void on_post_check(const protocol::Check& post, Outcome& out);
  // The POST was cleared to begin at `now` (J1).
  void on_post(sys::MonoNs now);
  // The delivery stopped at `stop`: a phase still open ends there (as far
  // as the parent saw it), so pack_ms and upload_ms say how long each ran.
  void close(sys::MonoNs stop, Outcome& out) const;

  // The last upload progress: bytes of the POST body the child had handed
  // to its connection (a lower bound of what may have reached the remote).
  std::optional<std::uint64_t> upload_done() const { return upload_done_; }

 private:
  // The refs' old ids; `keep`: an id already known stays.
  static void take_old_oids(const protocol::OldOids& old_oids, bool keep, Outcome& out);

  sys::MonoNs advertise_began_ = 0;
  sys::MonoNs pack_began_ = 0;
  sys::MonoNs post_began_ = 0;
  std::optional<std::uint64_t> upload_done_;
};

}  // namespace courier::supervisor
