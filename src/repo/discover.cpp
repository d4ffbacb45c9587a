// discover.cpp — the repository found as git finds it (see discover.hpp).
#include "repo/discover.hpp"

#include <filesystem>

#include "repo/repository.hpp"

namespace courier::repo {

namespace {

std::string without_trailing_slash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

Result<std::string> discover_repository(const std::optional<std::string>& start) {
  init_libgit2();
  git_repository* raw = nullptr;
  // FROM_ENV reads GIT_DIR, GIT_WORK_TREE and GIT_CEILING_DIRECTORIES and
  // searches from the working directory, as git does; an explicit start is
  // searched upwards from there, as `git -C DIR` does.
  const int rc = start ? git_repository_open_ext(&raw, start->c_str(), 0, nullptr)
                       : git_repository_open_ext(&raw, nullptr, GIT_REPOSITORY_OPEN_FROM_ENV, nullptr);
  if (rc != 0) {
    const git_error* e = git_error_last();
    std::string where = start ? *start : std::string("the working directory");
    return fail(Errc::invalid_argument, "not a git repository (or any of the parent directories): " + where +
                                            (e && e->message ? std::string(" (") + e->message + ")" : ""));
  }
  Repo found(raw);
  const std::string git_dir = without_trailing_slash(git_repository_path(found.get()));
  const char* workdir = git_repository_workdir(found.get());
  if (workdir != nullptr) {
    // The work tree names the repository when opening it finds the same
    // git directory (its .git, or a linked work tree's .git file).
    const std::string top = without_trailing_slash(workdir);
    if (auto again = open_repo(top); again) {
      std::error_code ec;
      if (std::filesystem::equivalent(without_trailing_slash(git_repository_path(again->get())), git_dir, ec)) {
        return top;
      }
    }
  }
  return git_dir;
}

}  // namespace courier::repo
