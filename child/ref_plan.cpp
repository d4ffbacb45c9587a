// ref_plan.cpp — the refs a POST updates, decided before anything is sent
// (ref_plan.hpp).
#include "child/ref_plan.hpp"

#include "repo/update_rule.hpp"
#include "transport/oid.hpp"

namespace courier::child {

namespace {

constexpr const char* kAtomicFailed = "atomic push failed";

protocol::RefResult refused(protocol::RefResult r, std::string why) {
  r.status = RefStatus::rejected;
  r.reason = std::move(why);
  return r;
}

// One ref's fate from the advertisement alone (and, for a fast-forward,
// the local history): up_to_date, rejected, or left not_attempted to send.
Result<protocol::RefResult> judge_ref(const protocol::Job& job, const RefUpdate& u, const transport::Advertisement& adv,
                                      git_repository* repo) {
  protocol::RefResult r{u.ref, RefStatus::not_attempted, std::nullopt, std::string(adv.oid_of(u.ref))};
  const std::string& old_oid = *r.old_oid;
  if (u.deletes()) {
    if (transport::is_zero_oid(old_oid)) {
      // A re-delivery (J4) finds its own deletion done: the ref is absent.
      if (!job.redelivery) return refused(r, "remote ref does not exist");
      r.status = RefStatus::up_to_date;
      return r;
    }
    if (!adv.capabilities.has("delete-refs")) return refused(r, "the remote does not support deleting refs");
  } else if (old_oid == u.oid) {
    r.status = RefStatus::up_to_date;
    return r;
  }
  if (u.expect_old && *u.expect_old != old_oid) {
    return refused(r, "stale info: expect_old mismatch: the remote has " + old_oid + ", expected " + *u.expect_old);
  }
  if (u.update != UpdateMode::fast_forward || u.deletes()) return r;
  auto refusal = repo::fast_forward_refusal(repo, job.repo, u.ref, old_oid, u.oid);
  if (!refusal) return tl::unexpected(refusal.error());
  if (*refusal) return refused(r, **refusal);
  return r;
}

// An atomic delivery moves all its refs or none: one refused here, or a
// re-delivery found half done, and nothing is sent.
void apply_atomic_rule(const protocol::Job& job, RefPlan& plan) {
  bool any_refused = false;
  bool any_current = false;
  for (std::size_t i = 0; i < plan.refs.size(); ++i) {
    const auto& r = plan.refs[i];
    any_refused = any_refused || r.status == RefStatus::rejected;
    // On a re-delivery only the refs the first attempt sent carry their
    // journalled old id: one of those at its new id was applied. A ref
    // that was already up to date then was never sent, and says nothing.
    any_current = any_current || (r.status == RefStatus::up_to_date && job.updates[i].expect_old.has_value());
  }
  if (!any_refused && job.redelivery && any_current && !plan.send.empty()) {
    for (std::size_t i : plan.send) {
      plan.refs[i] = refused(plan.refs[i],
                             "stale info: this atomic re-delivery found some of its refs already at their new ids "
                             "and this one still at its old id; an atomic attempt cannot have applied half");
    }
    plan.send.clear();
    return;
  }
  if (!any_refused) return;
  for (std::size_t i : plan.send) plan.refs[i].reason = kAtomicFailed;
  plan.send.clear();
}

}  // namespace

Result<RefPlan> plan_refs(const protocol::Job& job, const transport::Advertisement& adv, git_repository* repo) {
  RefPlan plan;
  for (std::size_t i = 0; i < job.updates.size(); ++i) {
    auto r = judge_ref(job, job.updates[i], adv, repo);
    if (!r) return tl::unexpected(r.error());
    if (r->status == RefStatus::not_attempted) plan.send.push_back(i);
    plan.refs.push_back(std::move(*r));
  }
  if (job.atomic) apply_atomic_rule(job, plan);
  return plan;
}

Summary summarise(const std::vector<protocol::RefResult>& refs) {
  Summary s;
  std::size_t current = 0;
  std::size_t refused = 0;
  for (const auto& r : refs) {
    current += r.status == RefStatus::up_to_date ? 1 : 0;
    if (r.status != RefStatus::ng && r.status != RefStatus::rejected) continue;
    ++refused;
    const std::string why = r.reason.value_or("(no reason given)");
    s.reason += (s.reason.empty() ? "" : "; ") + (refs.size() == 1 ? why : r.ref + ": " + why);
  }
  if (refused > 0) {
    // The refs an atomic refusal held back are named too: the reason says
    // what was not applied.
    for (const auto& r : refs) {
      if (r.status == RefStatus::not_attempted && r.reason) s.reason += "; " + r.ref + ": " + *r.reason;
    }
    s.status = wire::DeliveryStatus::rejected;
  } else {
    s.status = current == refs.size() ? wire::DeliveryStatus::up_to_date : wire::DeliveryStatus::delivered;
  }
  return s;
}

}  // namespace courier::child
