// user_account.hpp — the account this process runs as, from the password
// database (not $USER or $HOME, which a caller's environment may set): the
// name ssh logs in as when a remote names no user, and the home whose
// .ssh/known_hosts is read when no file is given.
#pragma once

#include <string>

#include "courier/result.hpp"

namespace courier::sys {

struct UserAccount {
  std::string name;
  std::string home;
};

// getpwuid_r of the real uid. Errors: os_error (no entry).
Result<UserAccount> current_user();

}  // namespace courier::sys
