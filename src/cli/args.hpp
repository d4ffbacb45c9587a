// args.hpp — command-line parsing for `git-courier`. Pure: no I/O, so every
// bad input has a unit test and a clear message.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "courier/exit_code.hpp"
#include "courier/result.hpp"
#include "wire/grammar.hpp"

namespace courier::cli {

// Exit codes: the contract scripts rely on, defined with their meanings in
// courier/exit_code.hpp; these are their names as ints for the commands.
inline constexpr int kExitOk = exit_value(ExitCode::ok);
inline constexpr int kExitRejected = exit_value(ExitCode::rejected);
inline constexpr int kExitUsage = exit_value(ExitCode::usage);
inline constexpr int kExitFailed = exit_value(ExitCode::failed);
inline constexpr int kExitDeadline = exit_value(ExitCode::deadline);
inline constexpr int kExitRevoked = exit_value(ExitCode::revoked);
inline constexpr int kExitProtocol = exit_value(ExitCode::protocol);
inline constexpr int kExitUnconfirmed = exit_value(ExitCode::unconfirmed);
inline constexpr int kExitSignalled = exit_value(ExitCode::signalled);
inline constexpr int kExitMismatch = exit_value(ExitCode::mismatch);

// The deadline's default and limit, and the grammars of durations and
// delivery ids: the wire leaf's, shared with the service's API.
using wire::check_delivery_id;
using wire::kDefaultDeadline;
using wire::kMaxDeadline;
using wire::parse_duration;

// --force-with-lease[=REF[:EXPECT]] as git spells it: bare (every pushed
// ref, expected at its remote-tracking ref), =REF (that ref, expected at its
// remote-tracking ref) or =REF:EXPECT (expected at EXPECT, a revision; an
// empty EXPECT: the ref must not exist).
struct LeaseArg {
  std::optional<std::string> ref;
  std::optional<std::string> expect;
};

// One ref of a push of several (or of a deletion), as cli/push_line.hpp
// settles a refspec: the remote ref in full, the revision to deliver (none:
// the ref is deleted, `:ref` or --delete), and `+` (a force for this ref).
struct RefArg {
  std::string ref;
  std::optional<std::string> rev;  // nullopt: a deletion
  bool force = false;
  bool operator==(const RefArg&) const = default;
};

struct PushArgs {
  // The words after the options, as `git push [<remote> [<refspec>...]]`
  // reads them (cli/push_line.hpp settles them into the fields below).
  std::vector<std::string> positional;
  // The refs of a push of several refspecs, or of a deletion (`:ref`,
  // --delete), in the order given; empty: the one ref of --ref/--rev/--oid.
  std::vector<RefArg> refs;
  // --delete / -d: every refspec names a remote ref to delete (git's form).
  bool delete_refs = false;
  // --atomic / --no-atomic; unset: atomic when more than one ref is updated
  // (Atomicity::automatic).
  std::optional<bool> atomic;
  // -o / --push-option, in the order given (git push -o); none given: git's
  // push.pushOption configuration of the repository, as git reads it.
  std::vector<std::string> push_options;
  bool push_options_given = false;  // -o given at least once (an empty one clears the configured list, as git's)
  std::string repo;
  std::string remote;
  std::string ref;
  std::optional<std::string> oid;
  std::optional<std::string> rev;
  // How the ref may move: at most one of these (none: fast-forward only).
  bool force = false;
  std::optional<LeaseArg> lease;
  std::optional<std::string> expect_old;
  std::chrono::milliseconds deadline = kDefaultDeadline;
  std::string auth = "none";
  std::optional<std::string> ca_file;
  // ssh remotes (A5): --known-hosts FILE (default: ~/.ssh/known_hosts) and
  // --ssh-passphrase-file FILE (an encrypted key's passphrase; default: asked
  // on the terminal).
  std::optional<std::string> known_hosts;
  std::optional<std::string> ssh_passphrase_file;
  std::optional<std::string> lane_dir;
  bool allow_http_loopback = false;
  std::string pack_engine = "auto";  // auto | libgit2 | git
  // The journal: a path, or the default (default_journal_path()); off with --no-journal.
  std::optional<std::string> journal;
  bool no_journal = false;
  // --state URL: a PostgreSQL state (postgres://...); `--state sqlite:FILE`
  // is read as --journal FILE. Not with --journal or --no-journal.
  std::optional<std::string> state;
  std::optional<std::string> host_id;  // --host-id NAME; default: the host name
  std::optional<std::string> delivery_id;
  bool read_back = false;  // after `possible`: one advertisement GET, printed after the outcome
  bool json = false;
  bool quiet = false;    // -q: errors only (no progress, no remote lines, no child stderr)
  bool verbose = false;  // -v: the supervisor's log lines too, terminal or not
  // --progress / --no-progress; unset: meters when stderr is a terminal.
  std::optional<bool> progress;
  // --via SOCKET: submit to the service listening on that Unix socket
  // (`git-courier serve`) instead of pushing from this process
  // (cli/via_client.hpp). The service owns the keys, the journal, the lanes
  // and the trust settings: the flags that configure those here are refused
  // with --via (service_config_flag_reason).
  std::optional<std::string> via;
  // --credential NAME (with --via): one of the service's credentials; none:
  // the service sends none.
  std::optional<std::string> credential;
  // The flags given that configure a local push (the first one is named in
  // the usage error --via gives).
  std::vector<std::string> local_flags;
  bool help = false;
  bool version = false;  // push --version
};

// Why FLAG cannot be given with --via (it is the service's configuration),
// or nullptr when it can.
const char* service_config_flag_reason(const std::string& flag);

// Arguments after `push`: options, and the words of git's form (<remote>
// and <refspec>), which push_line.hpp settles against the repository.
// Errors: invalid_argument naming the flag, or, for what git would accept
// but this command cannot honour (--all, --mirror, --tags, several
// refspecs), a refusal naming git's behaviour.
Result<PushArgs> parse_push_args(const std::vector<std::string>& args);

// `log`, `show ID` and `recover`: the journal commands.
struct JournalArgs {
  std::optional<std::string> journal;
  std::optional<std::string> state;  // --state postgres://... (sqlite:FILE is read as --journal FILE)
  std::optional<std::string> id;     // show
  std::size_t limit = 20;            // log
  // recover: the lane directory whose locks it honours, and how it reads back.
  std::optional<std::string> lane_dir;
  std::optional<std::string> host_id;  // recover: this host's name in a shared state
  std::string auth = "none";
  std::optional<std::string> ca_file;
  bool allow_http_loopback = false;
  bool json = false;
  bool help = false;
};
// `command` is "log", "show" or "recover". Errors: invalid_argument.
Result<JournalArgs> parse_journal_args(const std::string& command, const std::vector<std::string>& args);

struct KeygenArgs {
  std::string out;
  bool help = false;
};
Result<KeygenArgs> parse_keygen_args(const std::vector<std::string>& args);

}  // namespace courier::cli
