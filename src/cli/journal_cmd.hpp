// journal_cmd.hpp — the CLI's side of the delivery journal: where it lives by
// default, the read-back a person or `recover` asks for, and the commands
// `log`, `show ID` and `recover`.
#pragma once

#include <optional>
#include <string>

#include "cli/args.hpp"
#include "courier/courier.hpp"

namespace courier::cli {

// The effective user's journal, the same for push, serve, recover, log and
// show (sys/state_paths.hpp): root /var/lib/git-courier/journal.db, another
// user <home>/.local/state/git-courier/journal.sqlite. Errors:
// invalid_argument (no home directory known, a refused test root).
Result<std::string> default_journal_path();

// The journal a command uses: --journal, else the default.
Result<std::string> journal_path(const std::optional<std::string>& given);

// A read-back (J2): one advertisement GET of the remote within
// kReadBackBudget from its start, with its own credential from `auth`
// (minted for that GET alone, a read and not a push) and the same TLS
// rules as a delivery; through `proxy` when given (a proxy URL, its
// credentials kept in this process, as a delivery's).
ReadBackFn make_read_back(const std::string& auth, const std::optional<std::string>& ca_file, bool allow_http_loopback,
                          const std::optional<std::string>& proxy = std::nullopt);

int run_log(const JournalArgs& a);
int run_show(const JournalArgs& a);
int run_recover(const JournalArgs& a);

}  // namespace courier::cli
