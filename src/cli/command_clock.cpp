// command_clock.cpp — the command's instants, and the delivery's beside them.
#include "cli/command_clock.hpp"

#include "sys/clock.hpp"

namespace courier::cli {

CommandClock& command_clock() {
  static CommandClock clock;
  return clock;
}

nlohmann::json instants_json(const Outcome& o) {
  const CommandClock& c = command_clock();
  const Timings& t = o.timings;
  return {
      {"main", c.main},
      {"early", c.early},
      {"checked", c.checked},
      {"executor", c.executor},
      {"submitted", t.submitted},
      {"seat", t.seat},
      {"spawned", t.spawned},
      {"hello", t.hello},
      {"job_sent", t.job_sent},
      {"job_accepted", t.job_accepted},
      {"post_started", t.post_started},
      {"exited", t.exited},
      {"confirmed", t.confirmed},
      {"outcome", c.outcome},
      {"printed", sys::mono_now_ns()},
  };
}

}  // namespace courier::cli
