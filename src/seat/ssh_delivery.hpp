// ssh_delivery.hpp — an ssh:// delivery's part of the turn (A5): the
// parent's agent, started for the child that gets the job once its kill
// domain is known, and the job's ssh part pointing at it.
#pragma once

#include "seat/delivery_shared.hpp"
#include "seat/executor_core.hpp"
#include "supervisor/supervisor.hpp"

namespace courier::seat {

// For an ssh:// remote: sets so.prepare_job, which reads the host keys the
// known-hosts file accepts for the remote (none: the delivery ends
// transport_failed, nothing sent), starts the agent (serving only the
// child's kill domain, until the deadline, signing for the remote's user)
// and fills Job::ssh; and counts the host's mints with the agent's
// signatures (one cap). Anything else: nothing changes.
void prepare_ssh(Executor::Impl& exec, const DeliveryPtr& d, supervisor::SupervisorOptions& so);

}  // namespace courier::seat
