// command_clock.hpp — the instants of one `git-courier push` in this
// process, on CLOCK_MONOTONIC: where the command's time goes outside the
// delivery's own phases (start-up, checks, journal, lane, exit), told in
// its --json as "instants_ns" so that a benchmark can place each
// millisecond (docs/performance.md "Small push").
#pragma once

#include <nlohmann/json.hpp>

#include "courier/outcome.hpp"

namespace courier::cli {

struct CommandClock {
  MonoNs main = 0;      // main() began: the binary and its libraries are loaded
  MonoNs early = 0;     // the early child was spawned (its exec goes on in it)
  MonoNs checked = 0;   // the request was read and checked (repository, refs, configuration)
  MonoNs executor = 0;  // the executor was ready (lane directory, journal opened and recovered)
  MonoNs outcome = 0;   // the outcome was in hand (the child's stop confirmed, the turn ended)
};

// This process's one clock (the CLI runs one command).
CommandClock& command_clock();

// The command's instants and the delivery's (Outcome::timings), each in
// CLOCK_MONOTONIC nanoseconds, 0 for one that did not happen; "printed" is
// now, when the report is printed.
nlohmann::json instants_json(const Outcome& o);

}  // namespace courier::cli
