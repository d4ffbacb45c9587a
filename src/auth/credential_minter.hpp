// credential_minter.hpp — the `credential` minter: asks git's credential
// helpers (`git credential fill`) in the parent for the remote's user name
// and password, once per delivery, and sends them as HTTP Basic on each
// leg; after the outcome, tells the helpers whether they worked
// (`git credential approve` / `reject`).
//
// The helper runs with the delivery's repository's configuration, as
// `git -C <repo> push` would, wherever the command was started: git is run
// with `-C <repo>` and without the variables that would point it elsewhere
// (GIT_DIR, GIT_WORK_TREE, GIT_COMMON_DIR). A repository git refuses for
// its owner (safe.directory, "dubious ownership") is refused with git's
// words, or, when the options allow it (a service), set aside: the helper
// runs with the process's own configuration and a note says so.
// Otherwise it runs in the parent's environment — the parent may carry GIT_*
// configuration; the child never does (A1) — with terminal prompts off
// (GIT_TERMINAL_PROMPT=0: a service has no terminal, and a prompt would
// only wait out the deadline). It runs in its own process group and is
// killed, with anything it started in that group, if it overruns its bound.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/minter.hpp"
#include "courier/result.hpp"
#include "sys/clock.hpp"

namespace courier::auth {

// What git credential is told about the remote, as git itself derives it
// from a URL: protocol, host (with ":port" when not the default), path
// (without the leading "/", percent-decoded), and the user name when the
// URL names one.
struct CredentialQuery {
  std::string protocol;
  std::string host;
  std::string path;
  std::optional<std::string> username;
  // The "key=value\n" lines, without the terminating blank line.
  std::string lines() const;
};

// Errors: invalid_argument (unparseable remote; a value git would refuse).
Result<CredentialQuery> credential_query(std::string_view remote);

struct GitCredentialRun {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};

// Runs `git [-C <dir>] credential <action>` (fill | approve | reject) with
// `input` on its stdin and `env` as its whole environment, bounded by the
// absolute monotonic instant `until`: at that instant it is killed with its
// process group, reaped, and the run is an error. A non-empty `dir` is the
// directory git starts in (its repository's configuration applies), and
// GIT_DIR, GIT_WORK_TREE and GIT_COMMON_DIR are left out of `env`. Errors:
// spawn_failed, os_error, invalid_argument (input too large), invalid_value
// (overran `until`).
Result<GitCredentialRun> run_git_credential(const std::string& git_program, const std::string& action,
                                            const std::string& input, const std::vector<std::string>& env,
                                            sys::MonoNs until, const std::string& dir = "");

// Runs `git -C <dir> <args...>` as run_git_credential does (same bound,
// same environment rules), for the repository check before a fill.
Result<GitCredentialRun> run_git_in(const std::string& git_program, const std::vector<std::string>& args,
                                    const std::string& input, const std::vector<std::string>& env, sys::MonoNs until,
                                    const std::string& dir);

// The environment a credential helper runs in by default: this process's,
// with GIT_TERMINAL_PROMPT=0.
std::vector<std::string> credential_environment();

// The absolute path of `git` on the PATH found in env (or ours). Errors:
// invalid_argument (not found).
Result<std::string> find_git(const std::vector<std::string>& env);

// approve/reject run after the outcome is known (and, in the CLI, printed):
// a helper's bookkeeping, given a short bound of its own so that a slow or
// stuck `store`/`erase` cannot keep the command from ending.
inline constexpr sys::MonoNs kCredentialSettleBound = 2'000 * sys::kNsPerMs;

struct CredentialMinterOptions {
  std::string git_program;                            // empty: git on the helper's PATH
  std::optional<std::vector<std::string>> env;        // whole environment; empty: credential_environment()
  sys::MonoNs settle_bound = kCredentialSettleBound;  // approve/reject: this long from the call
  // A repository git refuses for its owner ("dubious ownership"): false
  // (the CLI), the fill fails with git's words; true (a service), the
  // helper runs with this process's own configuration instead, and
  // on_note is told.
  bool untrusted_repo_falls_back = false;
  std::function<void(const std::string&)> on_note;
};

class CredentialMinter : public Minter {
 public:
  explicit CredentialMinter(MintContext context, CredentialMinterOptions options = {});
  ~CredentialMinter() override;  // wipes the cached credential
  CredentialMinter(const CredentialMinter&) = delete;
  CredentialMinter& operator=(const CredentialMinter&) = delete;

  // The first call runs `git credential fill` (bounded by the delivery's
  // deadline) and caches the answer for this delivery; every call returns
  // "Authorization: Basic base64(user:password)". Errors: the helper's
  // failure (its message), no password given, a user name with ':'.
  Result<std::string> mint(const LegRequest& request) override;

  // After the outcome: approve (accepted) or reject the cached credential,
  // once; nothing when none was filled.
  Result<void> settle(bool accepted) override;
  // Basic credentials do not depend on the body: the POST may stream.
  bool binds_payload() const override { return false; }
  // git asks its helpers only after a 401: so does this minter (T2).
  bool after_challenge() const override { return true; }
  Result<void> approve();
  Result<void> reject();
  bool has_credential() const;

 private:
  Result<void> fill(sys::MonoNs until);
  Result<void> tell(const char* action);
  // Where git credential starts (config_dir_), decided once per delivery.
  Result<void> choose_config_dir(const std::string& git, const std::vector<std::string>& env, sys::MonoNs until);
  std::vector<std::string> environment() const;
  Result<std::string> git_program(const std::vector<std::string>& env) const;

  mutable std::mutex mu_;
  MintContext context_;
  CredentialMinterOptions options_;
  std::optional<std::string> username_;
  std::optional<std::string> password_;
  bool settled_ = false;
  // The directory git credential runs in: the repository, or "/" (the
  // process's own configuration) for a repository set aside; empty: not
  // decided yet, or no repository known (git starts where we are).
  std::optional<std::string> config_dir_;
};

}  // namespace courier::auth
