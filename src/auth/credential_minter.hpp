// credential_minter.hpp — the `credential` minter: asks git's credential
// helpers (`git credential fill`) in the parent for the remote's user name
// and password, once per delivery, and sends them as HTTP Basic on each
// leg; after the outcome, tells the helpers whether they worked
// (`git credential approve` / `reject`).
//
// The helper runs in the parent's environment — the parent may carry GIT_*
// configuration; the child never does (A1) — with terminal prompts off
// (GIT_TERMINAL_PROMPT=0: a service has no terminal, and a prompt would
// only wait out the deadline). It runs in its own process group and is
// killed, with anything it started in that group, if it overruns its bound.
#pragma once

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

// Runs `git credential <action>` (fill | approve | reject) with `input` on
// its stdin and `env` as its whole environment, bounded by the absolute
// monotonic instant `until`: at that instant it is killed with its process
// group, reaped, and the run is an error. Errors: spawn_failed, os_error,
// invalid_argument (input too large), invalid_value (overran `until`).
Result<GitCredentialRun> run_git_credential(const std::string& git_program, const std::string& action,
                                            const std::string& input, const std::vector<std::string>& env,
                                            sys::MonoNs until);

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
  Result<void> approve();
  Result<void> reject();
  bool has_credential() const;

 private:
  Result<void> fill(sys::MonoNs until);
  Result<void> tell(const char* action);

  mutable std::mutex mu_;
  MintContext context_;
  CredentialMinterOptions options_;
  std::optional<std::string> username_;
  std::optional<std::string> password_;
  bool settled_ = false;
};

}  // namespace courier::auth
