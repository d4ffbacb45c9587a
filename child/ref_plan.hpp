// ref_plan.hpp — which refs of a job the POST updates, decided from the
// advertisement before anything is sent, as `git push` decides it
// (remote.c, set_ref_status_for_push; send-pack.c's atomic rule): each ref
// is up to date, refused here in git's words, or sent; an atomic delivery
// with one ref refused here sends nothing. And the delivery's status and
// reason from its refs, once they are known.
#pragma once

#include <string>
#include <vector>

#include "courier/result.hpp"
#include "protocol/messages.hpp"
#include "transport/advertisement.hpp"
#include "wire/status.hpp"

struct git_repository;

namespace courier::child {

struct RefPlan {
  // Every ref of the job, in its order, with its advertised old id: refs
  // not sent carry their final status (up_to_date, rejected, or
  // not_attempted when an atomic delivery sends nothing); refs to send are
  // not_attempted until the report (or the delivery's end) says more.
  std::vector<protocol::RefResult> refs;
  // Indexes into refs (and the job's updates) of the refs whose commands
  // go in the POST, in the job's order. Empty: no POST.
  std::vector<std::size_t> send;
};

// Per ref, from the advertisement:
//   already at its new id                    up_to_date (a deletion: the ref
//                                            is absent, on a re-delivery only)
//   a deletion of a ref the remote lacks     rejected "remote ref does not exist"
//   a deletion without delete-refs           rejected (git's words)
//   expect_old not what the remote has       rejected "stale info"
//   fast_forward and git's rule refuses      rejected with git's word
//   otherwise                                sent
// Atomic: one ref rejected here makes every ref to send not_attempted
// ("atomic push failed"), and a re-delivery (J4) whose refs are partly at
// their new ids and partly to send is stale as a whole (an atomic attempt
// cannot have applied half: one of its sent refs, those carrying their
// journalled old id, is at its new id while another is still to send).
// `repo` is job.repo, opened once by the child. Errors: those of
// repo::fast_forward_refusal (the history could not be read).
Result<RefPlan> plan_refs(const protocol::Job& job, const transport::Advertisement& adv, git_repository* repo);

// The delivery's status and reason from its refs' statuses (each final):
// rejected when any is ng or rejected (the reason names each, with the
// ref when there are several), up_to_date when all are, else delivered.
struct Summary {
  wire::DeliveryStatus status = wire::DeliveryStatus::failed;
  std::string reason;
};
Summary summarise(const std::vector<protocol::RefResult>& refs);

}  // namespace courier::child
