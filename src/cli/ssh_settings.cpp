// ssh_settings.cpp — the ssh program from git's settings, and the key of
// --auth ssh-key:FILE with its passphrase (see ssh_settings.hpp).
#include "cli/ssh_settings.hpp"

#include "sys/process.hpp"
#include "sys/small_file.hpp"
#include "sys/tty_secret.hpp"

namespace courier::cli {

namespace {

// A value that is more than a program: whitespace (options, or a shell
// command line) or any byte a shell reads as more than a name.
bool more_than_a_program(const std::string& value) {
  return value.find_first_of(" \t\n\"'\\$`;&|<>()*?[]{}~#!") != std::string::npos;
}

// One setting's program: absolute as given, else found on PATH.
Result<std::string> program_of(const std::string& setting, const std::string& value, bool shell_words) {
  if (shell_words && more_than_a_program(value)) {
    return fail(Errc::invalid_argument,
                setting + " '" + value +
                    "' gives ssh options or a shell command: git-courier runs ssh with its own options, fixed (host "
                    "keys verified, its own agent, no control master); name only the ssh program, or put per-host "
                    "settings in ~/.ssh/config");
  }
  if (value.front() == '/') return value;
  if (value.find('/') != std::string::npos) {
    return fail(Errc::invalid_argument, setting + " '" + value + "' must name a program on PATH or an absolute path");
  }
  auto found = sys::find_on_path(value);
  if (!found) return fail(Errc::invalid_argument, setting + ": " + found.error().message);
  return found;
}

Result<std::string> read_passphrase_file(const std::string& path) {
  auto f = sys::read_small_regular_file(path, sys::kMaxSecretFile);
  if (!f) return fail(Errc::invalid_argument, "--ssh-passphrase-file " + path + ": " + f.error().message);
  if ((f->mode & 077) != 0) {
    return fail(Errc::invalid_argument,
                "--ssh-passphrase-file " + path + " is readable by others (chmod 600 " + path + ")");
  }
  std::string line = f->bytes.substr(0, f->bytes.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

}  // namespace

Result<std::string> resolve_ssh_program(const repo::GitConfig* config, const EnvLookup& env) {
  if (auto v = env("GIT_SSH_COMMAND"); v && !v->empty()) return program_of("GIT_SSH_COMMAND", *v, true);
  if (config) {
    if (auto v = config->get("core.sshcommand"); v && !v->empty()) return program_of("core.sshCommand", *v, true);
  }
  // GIT_SSH names a program that git runs without a shell: the whole value
  // is its name.
  if (auto v = env("GIT_SSH"); v && !v->empty()) return program_of("GIT_SSH", *v, false);
  return std::string();
}

Result<std::shared_ptr<const SshKey>> load_cli_ssh_key(const std::string& file,
                                                       const std::optional<std::string>& passphrase_file) {
  SshPassphraseFn ask = [&]() -> Result<std::string> {
    if (passphrase_file) return read_passphrase_file(*passphrase_file);
    auto typed = sys::read_secret_from_tty("Enter passphrase for key '" + file + "': ");
    if (!typed) {
      return fail(Errc::invalid_argument, "the key " + file +
                                              " is encrypted and there is no terminal to ask its passphrase on (" +
                                              typed.error().message + "): give it with --ssh-passphrase-file FILE");
    }
    return typed;
  };
  auto key = load_ssh_key(file, ask);
  if (!key) return fail(Errc::invalid_argument, "--auth ssh-key:" + file + ": " + key.error().message);
  return key;
}

}  // namespace courier::cli
