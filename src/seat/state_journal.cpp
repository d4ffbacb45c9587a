// state_journal.cpp — the executor's journal from its options (state_journal.hpp).
#include "seat/state_journal.hpp"

#include "state/state_url.hpp"
#include "sys/process.hpp"

namespace courier::seat {

bool wants_journal(const ExecutorOptions& opt) { return !opt.journal.empty() || !opt.state.empty(); }

std::string host_id_of(const ExecutorOptions& opt) { return opt.host_id.empty() ? sys::host_name() : opt.host_id; }

Result<std::unique_ptr<journal::Journal>> open_executor_journal(const ExecutorOptions& opt, sys::MonoNs connect_until) {
  if (opt.state.empty()) return journal::open_sqlite(opt.journal);
  // Two places for one journal: which one was meant cannot be guessed.
  if (!opt.journal.empty()) {
    return fail(Errc::invalid_argument,
                "give the journal as a state URL (state) or as a file (journal), not both: journal '" + opt.journal +
                    "' was given with a state URL");
  }
  auto url = state::parse_state_url(opt.state);
  if (!url) return tl::unexpected(url.error());
  return journal::open_state(*url, "git-courier/" + host_id_of(opt) + "/" + std::to_string(sys::self_pid()),
                             connect_until);
}

}  // namespace courier::seat
