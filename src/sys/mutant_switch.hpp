// mutant_switch.hpp — the run-time switch of the mutation build
// (scripts/mutation-control, docs/testing.md "Mutation control").
//
// The mutation build compiles every mutant of scripts/mutants.tsv into one
// set of binaries: each mutated place becomes
//   if (::courier::mutant::on(K)) { mutated } else { original }
// (or a conditional expression). Which mutant is on is chosen per run, by a
// file, never by a rebuild. The shipped build contains none of this: the
// copies that call on() and this file's implementation are compiled only
// when CMake is given COURIER_MUTANT_SCHEMATA.
#pragma once

namespace courier::mutant {

// The file that selects the mutant of a run: the first one found walking up
// from $TMPDIR to the root. Its content is one mutant id, or "none". A
// directory below the run's $TMPDIR (a test's private tmpfs, say) still
// belongs to the run. A process without TMPDIR, or whose TMPDIR leads to no
// such file (a test's scrubbed environment), takes the TMPDIR its session's
// leader was started with: mutation control starts each run's test program
// in a session of its own, and the product never leaves its session.
inline constexpr const char* kSelectorName = "courier-mutant";

// Whether mutant number `index` is the one selected for this process. Reads
// one integer written once before main() (a static initializer, before any
// thread or spawn): safe between clone3 and execve, in the killer thread
// and in a signal handler.
bool on(int index) noexcept;

}  // namespace courier::mutant
