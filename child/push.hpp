// push.hpp — one delivery, as the child performs it: advertisement GET,
// pack, receive-pack POST, report — each leg with its own token and its own
// authority check (T2–T4), answering with exactly one result.
#pragma once

#include "child/channel.hpp"
#include "protocol/messages.hpp"

namespace courier::child {

// Runs the job; never throws. The result says delivered only when the remote
// reported `unpack ok` and `ok <ref>` for exactly this ref (T4).
protocol::ResultMsg run_push(const protocol::Job& job, Channel& channel);

}  // namespace courier::child
