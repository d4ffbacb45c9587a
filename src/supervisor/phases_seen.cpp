// phases_seen.cpp — the phases as the parent saw them (phases_seen.hpp).
#include "supervisor/phases_seen.hpp"

namespace courier::supervisor {

namespace {

std::uint64_t ms_between(sys::MonoNs from, sys::MonoNs to) {
  return to > from ? static_cast<std::uint64_t>((to - from) / sys::kNsPerMs) : 0;
}

}  // namespace

void PhasesSeen::on_progress(const protocol::Progress& p, sys::MonoNs now, Outcome& out) {
  if (p.phase == "advertise") {
    if (advertise_began_ == 0) advertise_began_ = now;
    if (p.total != 0 && p.done == p.total) out.advertise_ms = ms_between(advertise_began_, now);
  }
  take_old_oids(p.old_oids, false, out);
  if (p.pack_engine) {
    out.pack_engine = p.pack_engine;
    if (pack_began_ == 0) pack_began_ = now;
  }
  if (p.phase == "upload") upload_done_ = p.done;
}

void PhasesSeen::on_job(const protocol::Job& job, Outcome& out) {
  out.refs.clear();
  for (const RefUpdate& u : job.updates) {
    RefOutcome r;
    r.ref = u.ref;
    r.oid = u.oid;
    out.refs.push_back(std::move(r));
  }
}

void PhasesSeen::on_post_check(const protocol::Check& post, Outcome& out) {
  take_old_oids(post.old_oids, true, out);
  for (RefOutcome& r : out.refs) {
    if (post.old_oids.empty() || post.old_oids.count(r.ref) != 0) r.status = RefStatus::unknown;
  }
}

void PhasesSeen::take_old_oids(const protocol::OldOids& old_oids, bool keep, Outcome& out) {
  for (RefOutcome& r : out.refs) {
    auto it = old_oids.find(r.ref);
    if (it == old_oids.end() || (keep && r.old_oid)) continue;
    r.old_oid = it->second;
  }
  if (!out.refs.empty() && out.refs.front().old_oid) out.old_oid = out.refs.front().old_oid;
}

void PhasesSeen::on_post(sys::MonoNs now) {
  if (post_began_ == 0) post_began_ = now;
}

void PhasesSeen::close(sys::MonoNs stop, Outcome& out) const {
  if (advertise_began_ != 0 && !out.advertise_ms) out.advertise_ms = ms_between(advertise_began_, stop);
  // A spooled pack is done before the POST; a streamed one is still being
  // built while it uploads, and the parent sees its start only: its time
  // is counted to the POST's start.
  if (pack_began_ != 0 && !out.pack_ms) out.pack_ms = ms_between(pack_began_, post_began_ != 0 ? post_began_ : stop);
  if (post_began_ != 0 && !out.upload_ms) out.upload_ms = ms_between(post_began_, stop);
}

}  // namespace courier::supervisor
