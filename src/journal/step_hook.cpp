// step_hook.cpp — the process-wide crash-point hook of a test build
// (journal/step_hook.hpp); in a shipped build this file defines only the
// edge's name.
#include "journal/step_hook.hpp"

#include <atomic>

namespace courier::journal {

const char* step_edge_name(StepEdge e) { return e == StepEdge::before ? "before" : "after"; }

#if COURIER_TEST_HOOKS
namespace {
std::atomic<StepHook> g_hook{nullptr};
}  // namespace

void set_step_hook_for_tests(StepHook hook) noexcept { g_hook.store(hook); }

void at_step(Step step, StepEdge edge) noexcept {
  if (StepHook h = g_hook.load()) h(step, edge);
}
#endif

}  // namespace courier::journal
