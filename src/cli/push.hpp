// push.hpp — `git-courier push`: validate everything before any child
// exists, run one delivery through an Executor, report it (human or JSON),
// and turn SIGINT/SIGTERM into a revocation that still waits for the
// confirmed stop.
#pragma once

#include <functional>
#include <string>

#include <tl/expected.hpp>

#include "cli/args.hpp"
#include "cli/output.hpp"
#include "cli/tracking_update.hpp"
#include "cli/progress_view.hpp"
#include "courier/courier.hpp"

namespace courier::cli {

// Settles a push's git-style words against the repository (loads
// libgit2): the settled arguments, or the exit code of an error it has
// already said.
using SettlePush = std::function<tl::expected<PushArgs, int>(const PushArgs&)>;
// Returns the process exit code (args.hpp). A local push starts its
// delivery child before it settles `parsed`: the child's exec and library
// loading overlap libgit2's loading, the settling and the checks.
int run_push(const PushArgs& parsed, const SettlePush& settle);

// Shared with `push --via` (cli/via_client.hpp), so that a delivery run by
// the service is told exactly as a local one:
// A usage error: on stderr, and with --json as the JSON object too.
// Returns kExitUsage.
int push_usage(const PushArgs& a, const std::string& message);
// Meters on stderr: --progress/--no-progress, else when stderr is a
// terminal; never with --quiet.
bool show_meters(const PushArgs& a);
// What the progress view shows: meters (show_meters), messages unless
// --quiet, the lane wait's start and end with -v.
ProgressView::Options progress_options(const PushArgs& a);
// A signal's word on stderr, the nth received (SIGINT, SIGTERM, SIGHUP):
// the first revokes, the later ones are told the stop is being confirmed.
// Through the view, so that a meter's line is ended, never written over.
void say_signalled(int signo, int nth, ProgressView& view);
// Refused fields (cli/push_request.hpp): each message on stderr, and with
// --json the usage object with every one in "errors". Returns kExitUsage.
int push_refused(const PushArgs& a, const FieldErrors& errors);
// Prints the outcome (JSON on stdout, the human line and any hint on stderr
// unless quiet and fine) and returns the exit code.
int report(const PushArgs& a, const Outcome& o, const DeliveryFacts& facts);
// What an outcome of this command line is told with: the remote, the ref
// and object (the first ref's, for several), and each ref as asked.
DeliveryFacts push_facts(const PushArgs& a, const CheckedRequest& checked);
// The remote-tracking refs after a push: per ref for several
// (update_tracking_refs), else the one ref's (update_tracking).
void track(const PushArgs& a, const DeliveryFacts& facts, const PushedRef& pushed, const Outcome& o);

}  // namespace courier::cli
