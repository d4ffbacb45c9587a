// delivery_push.hpp — the delivery child's entrypoint.
//
// The parent re-execs its own binary with argv exactly
// [exe, wire::kChildWord]; this is what runs then. It says hello, reads one
// job frame and does that job, answering only through its stdout frames.
// Run by hand (stdin a TTY, or no valid job) it refuses, with a message on
// stderr and kChildMisuse (rule C2): it never pushes without a job.
#pragma once

#include "wire/child_argv.hpp"

namespace courier::child {

// Runs the child. Returns its exit code (wire::kChild*).
int run_delivery_push(int argc, char** argv);

}  // namespace courier::child
