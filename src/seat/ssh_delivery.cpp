// ssh_delivery.cpp — an ssh:// delivery's agent, per child (ssh_delivery.hpp).
#include "seat/ssh_delivery.hpp"

#include "agent/agent_server.hpp"
#include "agent/ssh_target.hpp"
#include "seat/executor_core.hpp"
#include "supervisor/scratch_area.hpp"
#include "sys/process.hpp"
#include "sys/user_account.hpp"

namespace courier::seat {

namespace {

using Weak = std::weak_ptr<DeliveryHandle::Shared>;

constexpr const char* kDefaultSsh = "/usr/bin/ssh";

// What an ssh:// delivery's agent is made of, fixed when the turn starts.
struct SshPlan {
  agent::SshTarget target;
  std::string known_hosts;
  std::string program;
  std::string parent;  // the scratch area
  std::string name_prefix;
};

Result<SshPlan> plan_of(const DeliveryHandle::Shared& d, const agent::SshTarget& target) {
  SshPlan p;
  p.target = target;
  // The user ssh logs in as: the remote's (the canonical remote keeps it),
  // else this account's name (as ssh).
  p.known_hosts = d.req.known_hosts;
  if (p.target.user.empty() || p.known_hosts.empty()) {
    auto me = sys::current_user();
    if (!me) return tl::unexpected(me.error());
    if (p.target.user.empty()) p.target.user = me->name;
    if (p.known_hosts.empty()) p.known_hosts = me->home + "/.ssh/known_hosts";
  }
  p.program = d.req.ssh_program.empty() ? kDefaultSsh : d.req.ssh_program;
  p.parent = supervisor::scratch_parent_path();
  // Named like a scratch directory of this host: the sweep removes one a
  // killed host left behind.
  p.name_prefix = std::string(supervisor::kScratchPrefix) + std::to_string(sys::self_pid()) + "-agent-";
  return p;
}

agent::AgentRules rules_of(Executor::Impl& exec, const DeliveryPtr& d, const std::shared_ptr<std::atomic<int>>& mints) {
  agent::AgentRules r;
  r.key = d->req.ssh_key;
  r.deadline = d->deadline;
  r.authority = d->req.authority;
  r.mints = mints;
  const Weak weak = d;
  r.on_revoked = [weak](const std::string& words) {
    auto s = weak.lock();
    if (!s) return;
    s->authority_revoked(words);  // J1: journalled before the kill
    std::shared_ptr<supervisor::Supervisor> sup;
    {
      sys::MutexLock lock(s->mu);
      sup = s->sup;
    }
    if (sup) sup->revoke(words, RevokeCause::authority);
  };
  r.on_event = [log = exec.log_sink(), id = d->id](const std::string& line) {
    log("delivery " + std::to_string(id) + ": " + line);
  };
  return r;
}

}  // namespace

void prepare_ssh(Executor::Impl& exec, const DeliveryPtr& d, supervisor::SupervisorOptions& so) {
  auto target = agent::ssh_target(d->remote);
  if (!target) return;
  auto mints = std::make_shared<std::atomic<int>>(0);
  if (so.mint) {
    so.mint = [inner = so.mint, mints](const MintRequest& m) {
      mints->fetch_add(1);
      return inner(m);
    };
  }
  // Weak: the supervisor keeps its options, and the delivery keeps its
  // supervisor until the turn ends.
  so.prepare_job = [&exec, weak = Weak(d), t = *target, mints](const supervisor::ChildDomain& child,
                                                               protocol::Job& job) -> Result<std::shared_ptr<void>> {
    auto s = weak.lock();
    if (!s) return fail(Errc::invalid_argument, "the delivery is gone");
    // validate() requires the key; a delivery resumed without one has none.
    if (!s->req.ssh_key) return fail(Errc::invalid_argument, "no SSH key for the ssh:// remote " + s->remote);
    auto plan = plan_of(*s, t);
    if (!plan) return tl::unexpected(plan.error());
    if (auto made = supervisor::open_scratch_parent(); !made) return tl::unexpected(made.error());
    const std::string alias = agent::host_key_alias(plan->target.host, plan->target.port);
    auto keys = agent::read_known_hosts(plan->known_hosts, alias);
    if (!keys) return tl::unexpected(keys.error());
    agent::AgentRules rules = rules_of(exec, s, mints);
    rules.user = plan->target.user;
    rules.host_keys = std::move(*keys);
    auto server = agent::AgentServer::start(plan->parent, plan->name_prefix, std::move(rules),
                                            agent::KillDomainFacts{child.pid, child.cgroup});
    if (!server) return tl::unexpected(server.error());
    const agent::AgentPlace& at = (*server)->place();
    job.ssh = protocol::SshJob{plan->program, at.socket, at.known_hosts, at.identity, alias};
    return std::shared_ptr<void>(std::move(*server));
  };
}

}  // namespace courier::seat
