// state_journal.hpp — which journal an executor's options ask for (none,
// `journal`: a SQLite file, or `state`: a state URL) and opening it: the
// executor's one door to the state backend.
#pragma once

#include <memory>
#include <string>

#include "courier/courier.hpp"
#include "journal/journal.hpp"
#include "sys/clock.hpp"

namespace courier::seat {

// True when the options ask for a journal (`journal` or `state` given).
bool wants_journal(const ExecutorOptions& opt);

// opt.host_id, else this machine's host name.
std::string host_id_of(const ExecutorOptions& opt);

// Opens the journal the options name. Errors: invalid_argument (both
// `state` and `journal` given; a state URL that cannot be read),
// journal_failed, database_failed (open_state's, connected by
// `connect_until`, a CLOCK_MONOTONIC instant).
Result<std::unique_ptr<journal::Journal>> open_executor_journal(const ExecutorOptions& opt, sys::MonoNs connect_until);

}  // namespace courier::seat
