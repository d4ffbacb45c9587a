// step_hook.hpp — the journal's crash points: a process-wide hook called at
// every step boundary of the store layer, before and after each write, so a
// test can stop the writing process there (the crash-point harness,
// docs/testing.md "Crash points").
//
// Compiled only into a test build (CMake: COURIER_TEST_HOOKS, on when the
// tests are built); everywhere else at_step() is an empty inline function
// and set_step_hook_for_tests() does not exist, so a shipped build carries
// neither the call nor the hook. This header is the one place that knows.
#pragma once

#include "journal/journal.hpp"

#ifndef COURIER_TEST_HOOKS
#define COURIER_TEST_HOOKS 0
#endif

namespace courier::journal {

// Which side of a write a boundary is: `before` nothing of the write is
// committed; `after` its transaction committed (synced when durable).
enum class StepEdge { before, after };

const char* step_edge_name(StepEdge e);

#if COURIER_TEST_HOOKS
// Called with the step a submit() or append() writes and the edge, on the
// writing thread. A plain function (no state, no allocation): it is set once
// before any journal is opened, and may end the process (raise(SIGKILL)).
using StepHook = void (*)(Step step, StepEdge edge);
// Sets (or, with nullptr, clears) the hook of this process.
void set_step_hook_for_tests(StepHook hook) noexcept;
// True in a build that calls the hook.
inline constexpr bool kStepHooks = true;
void at_step(Step step, StepEdge edge) noexcept;
#else
inline constexpr bool kStepHooks = false;
inline void at_step(Step, StepEdge) noexcept {}
#endif

}  // namespace courier::journal
