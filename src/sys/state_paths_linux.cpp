// state_paths_linux.cpp — the default state paths of the effective user and
// the test root they may be taken under: the raw calls behind state_paths.hpp.
#include "sys/state_paths.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <vector>

#include "sys/fd.hpp"
#include "sys/io.hpp"

namespace courier::sys {

namespace {

constexpr const char* kRootLanes = "/run/git-courier/lanes";
constexpr const char* kRootJournal = "/var/lib/git-courier/journal.db";
// Under a user's home directory, as the XDG base directory layout would
// place it with no XDG_STATE_HOME set: the same place for every process of
// the uid, whatever its environment says.
constexpr const char* kUserState = "/.local/state/git-courier";
// getpwuid_r's buffer never grows past this (an entry is a few hundred bytes).
constexpr std::size_t kMaxPasswdBuffer = 1 << 20;

tl::unexpected<Error> refused(const std::string& why) {
  return fail(Errc::invalid_argument, std::string(kTestRootVariable) + " is refused: " + why +
                                          " (a setting for the test suites only: see docs/testing.md)");
}

// The verified directory's owner and mode: ours, no group or other write.
Result<void> check_owned_dir(const std::string& root) {
  ScopedFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return refused(os_error("cannot open it as a directory", errno).message);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return refused(os_error("fstat", errno).message);
  if (st.st_uid != ::geteuid()) return refused("it is owned by uid " + std::to_string(st.st_uid) + ", not this user");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return refused("it is writable by its group or by other users");
  return {};
}

// The home directory of `uid` in the password database, without trailing
// slashes ("" for "/"). getpwuid_r: a library host may resolve this on any
// thread.
Result<std::string> home_of(uid_t uid) {
  const long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? static_cast<std::size_t>(hint) : 16384);
  struct passwd pw {};
  struct passwd* found = nullptr;
  int rc = 0;
  while ((rc = ::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found)) == ERANGE && buf.size() < kMaxPasswdBuffer) {
    buf.resize(buf.size() * 2);
  }
  if (rc != 0 || found == nullptr || pw.pw_dir == nullptr || pw.pw_dir[0] != '/') {
    return fail(Errc::invalid_argument,
                "uid " + std::to_string(uid) + " has no absolute home directory in the password database");
  }
  std::string home = pw.pw_dir;
  while (!home.empty() && home.back() == '/') home.pop_back();
  return home;
}

// `file` in the effective user's state directory: root's fixed path, or
// under the uid's home.
Result<std::string> state_path(const char* root_path, const std::string& user_file, const char* flag) {
  const uid_t me = ::geteuid();
  if (me == 0) return under_test_root(root_path);
  auto home = home_of(me);
  if (!home) return fail(Errc::invalid_argument, home.error().message + "; give " + flag);
  return under_test_root(*home + kUserState + "/" + user_file);
}

}  // namespace

Result<std::string> test_root() {
  const char* value = std::getenv(kTestRootVariable);
  if (value == nullptr || *value == '\0') return std::string();
  const std::string root = value;
  if (root.front() != '/') return refused("it is not an absolute path");
  // The canonical form differs from what was given when a symbolic link,
  // ".", ".." or a redundant '/' is in it.
  const std::unique_ptr<char, decltype(&std::free)> real(::realpath(root.c_str(), nullptr), &std::free);
  if (!real) return refused(os_error("it does not resolve", errno).message);
  if (root != real.get()) return refused("it is not the real path of a directory (a symbolic link or '..' in it)");
  if (auto ok = check_owned_dir(root); !ok) return tl::unexpected(ok.error());
  return root == "/" ? std::string() : root;
}

Result<std::string> under_test_root(const std::string& absolute) {
  auto root = test_root();
  if (!root) return tl::unexpected(root.error());
  return *root + absolute;
}

Result<std::string> default_lane_dir() { return state_path(kRootLanes, "lanes", "--lane-dir (lane_dir)"); }

Result<std::string> default_journal_path() {
  return state_path(kRootJournal, "journal.sqlite", "--journal, --state or --no-journal");
}

}  // namespace courier::sys
