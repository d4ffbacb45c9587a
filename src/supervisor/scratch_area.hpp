// scratch_area.hpp — where children's scratch directories live, and the
// sweep of those a killed host left behind.
//
// Every scratch directory lives in one directory of this user's own,
// $TMPDIR/git-courier-<euid> (TMPDIR unset or empty: /tmp), created 0700 and
// verified as private (sys/private_dir.hpp: a real directory, ours, no group
// or other write; never a symbolic link, never chmodded when not made here).
// No other user can plant anything in it, so the sweep meets only what this
// user's hosts made.
//
// The sweep removes, there, the directories named after a host pid that is
// gone (git-courier-scratch-<pid>-XXXXXX), that are real directories owned by
// this user, and that carry no kept marker (an unconfirmed stop's files stay
// until recovery confirms it). It never runs before a child is spawned, so
// it never spends a deadline: an executor's worker runs it after each
// delivery's outcome is out, bounded by kSweepBudget (what is left is
// removed by a later sweep).
#pragma once

#include <chrono>
#include <string>

#include "courier/result.hpp"
#include "sys/private_dir.hpp"

namespace courier::supervisor {

// The wall time one sweep may spend after a child's stop.
inline constexpr std::chrono::milliseconds kSweepBudget{100};

// What a scratch directory's name starts with, then the host's pid and '-'.
inline constexpr const char* kScratchPrefix = "git-courier-scratch-";

// The marker that keeps a scratch directory out of the sweep.
inline constexpr const char* kKeptMarker = ".kept-unconfirmed";

// $TMPDIR/git-courier-<euid>: the path, whether or not it exists yet.
std::string scratch_parent_path();

// Opens the scratch parent, creating it 0700 when absent. Errors:
// invalid_argument (not a private directory of this user: the message says
// why), os_error.
Result<sys::PrivateDir> open_scratch_parent();

// A fresh scratch directory for this host, mode 0700, in the parent.
// Errors: those of open_scratch_parent, os_error.
Result<std::string> make_scratch_dir(const sys::PrivateDir& parent);

// One sweep of the parent, within `budget`; true when nothing sweepable is
// left. One sweep at a time in this process: a call while another sweeps
// returns false at once.
bool sweep_scratch(const sys::PrivateDir& parent, std::chrono::milliseconds budget);

// After a delivery: the parent, when it exists, swept within kSweepBudget.
void sweep_after_delivery();

}  // namespace courier::supervisor
