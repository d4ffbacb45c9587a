// ssh_settings.hpp — what a `push` to an ssh remote reads beside the remote
// (A5): the key (--auth ssh-key:FILE, its passphrase asked on the terminal
// or read from --ssh-passphrase-file), the known-hosts file
// (--known-hosts), and the ssh program, from git's own settings in git's
// order: GIT_SSH_COMMAND, then core.sshCommand, then GIT_SSH. Only the
// program is taken from them: the product's options to ssh are fixed, so a
// value with options (more than one word) is refused, never dropped in
// silence. A relative name is found on PATH; none of them: /usr/bin/ssh.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cli/http_settings.hpp"  // EnvLookup
#include "courier/result.hpp"
#include "courier/ssh_key.hpp"
#include "repo/git_config.hpp"

namespace courier::cli {

// The ssh program, absolute, or "" (the product's default, /usr/bin/ssh).
// `config` may be null (no repository read). Errors: invalid_argument
// naming the setting (options given, a program not found on PATH).
Result<std::string> resolve_ssh_program(const repo::GitConfig* config, const EnvLookup& env);

// The key of --auth ssh-key:FILE. An encrypted key's passphrase comes from
// `passphrase_file` when given (its first line), else from the terminal
// (/dev/tty, echo off); with neither, the key is refused saying how to give
// one. Errors: invalid_argument naming the file.
Result<std::shared_ptr<const SshKey>> load_cli_ssh_key(const std::string& file,
                                                       const std::optional<std::string>& passphrase_file);

}  // namespace courier::cli
