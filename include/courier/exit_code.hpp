// exit_code.hpp — (public) the exit codes of `git-courier push` (and of
// the other commands that end with an outcome), each defined once with
// what it means: the outcome table (outcome.hpp) names one per kind, the
// CLI's help and manual list these rows.
#pragma once

#include <string_view>

namespace courier {

// name, value, meaning (for --help and the manual's EXIT STATUS).
#define COURIER_EXIT_CODE_LIST(X)                                            \
  X(ok, 0, "delivered or up_to_date")                                        \
  X(rejected, 1, "rejected")                                                 \
  X(usage, 2, "usage or configuration error")                                \
  X(failed, 3, "transport, auth or spawn failure")                           \
  X(deadline, 4, "deadline_killed")                                          \
  X(revoked, 5, "revoked or cancelled_no_dispatch")                          \
  X(protocol, 6, "protocol_fault")                                           \
  X(unconfirmed, 7, "unconfirmed or cancel_uncertain: the seat is retained") \
  X(signalled, 8, "child_signalled: a signal not sent by git-courier")       \
  X(mismatch, 9, "push --via: an outcome for another delivery")

enum class ExitCode : int {
#define COURIER_EXIT_CODE_ENUMERATOR(n, value, meaning) n = value,
  COURIER_EXIT_CODE_LIST(COURIER_EXIT_CODE_ENUMERATOR)
#undef COURIER_EXIT_CODE_ENUMERATOR
};

struct ExitCodeRow {
  ExitCode code;
  std::string_view number;  // the value as text ("0")
  std::string_view meaning;
};

inline constexpr ExitCodeRow kExitCodeRows[] = {
#define COURIER_EXIT_CODE_ROW(n, value, meaning) {ExitCode::n, #value, meaning},
    COURIER_EXIT_CODE_LIST(COURIER_EXIT_CODE_ROW)
#undef COURIER_EXIT_CODE_ROW
};

constexpr int exit_value(ExitCode c) { return static_cast<int>(c); }

}  // namespace courier
