// user_account_linux.cpp — the raw calls behind user_account.hpp.
#include "sys/user_account.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "sys/io.hpp"

namespace courier::sys {

Result<UserAccount> current_user() {
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16 * 1024);
  const int err = ::getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &found);
  if (err != 0 || !found) {
    return tl::unexpected(
        os_error("no password database entry for uid " + std::to_string(::getuid()), err ? err : ENOENT));
  }
  return UserAccount{pw.pw_name ? pw.pw_name : "", pw.pw_dir ? pw.pw_dir : ""};
}

}  // namespace courier::sys
