// tty_secret.hpp — a secret typed on the controlling terminal (an SSH key's
// passphrase), read from /dev/tty with echo off, as ssh and ssh-keygen read
// one: never from stdin (a pipe there is the command's input, not a person)
// and never shown.
#pragma once

#include <string>

#include "courier/result.hpp"

namespace courier::sys {

// Writes `prompt` to /dev/tty, reads one line there with echo off (restored
// after, a newline written), at most 1024 bytes, without its newline.
// Errors: os_error (no controlling terminal), invalid_argument (end of
// input before a line, or a line too long).
Result<std::string> read_secret_from_tty(const std::string& prompt);

}  // namespace courier::sys
