// repo_root.cpp — the repository root rule (repo_root.hpp): every place a
// repository's objects are read from, resolved and checked against the root.
#include "service/repo_root.hpp"

#include <filesystem>
#include <optional>
#include <vector>

#include "sys/small_file.hpp"

namespace courier::service {

namespace {

namespace fs = std::filesystem;

// A `.git` file, a commondir or an alternates file is a line or a few.
constexpr std::size_t kMaxPointerFile = 64 * 1024;

// One check's walk: the root, and the object directories seen so far.
struct Walk {
  const std::string& root;
  int object_dirs = 0;
};

tl::unexpected<Error> refused(const std::string& why) { return fail(Errc::invalid_argument, why); }

// `path` with every symbolic link resolved, required under the root.
Result<fs::path> resolved_under(const Walk& w, const std::string& what, const fs::path& path) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec) return refused(what + " " + path.string() + " cannot be resolved: " + ec.message());
  if (!is_under_root(real.string(), w.root)) {
    return refused(what + " " + path.string() + " is " + real.string() + ", outside the repository root");
  }
  return real;
}

// A small pointer file's text; nullopt when absent. A symbolic link, a
// special file or a large file there is refused: what it points at could
// not be told.
Result<std::optional<std::string>> pointer_text(const fs::path& path) {
  std::error_code ec;
  const auto st = fs::symlink_status(path, ec);
  if (st.type() == fs::file_type::not_found) return std::optional<std::string>();
  if (ec) return refused(path.string() + ": " + ec.message());
  auto f = sys::read_small_regular_file(path.string(), kMaxPointerFile);
  if (!f) return refused(path.string() + ": " + f.error().message);
  return std::optional<std::string>(std::move(f->bytes));
}

// The lines of a text, without their ends.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
    at = end + 1;
  }
  return out;
}

// A pointer file's first line; nullopt when absent.
Result<std::optional<std::string>> pointer_line(const fs::path& path) {
  auto text = pointer_text(path);
  if (!text || !*text) return text;
  const auto lines = lines_of(**text);
  return std::optional<std::string>(lines.empty() ? std::string() : lines.front());
}

// `text` as a path, relative ones taken from `base`.
fs::path path_from(const fs::path& base, const std::string& text) {
  const fs::path p(text);
  return p.is_relative() ? base / p : p;
}

// Every symbolic link among a directory's entries resolved under the root
// (git never makes one in an object directory). Plain entries are not
// statted: the directory's own entry types say which are links.
Result<void> links_under(const Walk& w, const fs::path& dir, bool into_subdirs) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_symlink(ec)) {
      if (auto r = resolved_under(w, "the object store's entry", e.path()); !r) return tl::unexpected(r.error());
    } else if (into_subdirs && e.is_directory(ec)) {
      if (auto r = links_under(w, e.path(), false); !r) return r;
    }
  }
  return {};
}

Result<void> object_dir_under(Walk& w, const fs::path& dir, int depth);

// The alternates an object directory names, each checked as an object
// directory of its own, one level deeper.
Result<void> alternates_under(Walk& w, const fs::path& objects, int depth) {
  auto text = pointer_text(objects / "info" / "alternates");
  if (!text) return tl::unexpected(text.error());
  if (!*text) return {};
  for (const auto& entry : lines_of(**text)) {
    if (entry.empty() || entry[0] == '#') continue;
    if (depth >= kMaxAlternateDepth) {
      return refused("alternates nested deeper than " + std::to_string(kMaxAlternateDepth) + " at " + objects.string());
    }
    auto real = resolved_under(w, "the alternate", path_from(objects, entry));
    if (!real) return tl::unexpected(real.error());
    if (auto r = object_dir_under(w, *real, depth + 1); !r) return r;
  }
  return {};
}

// One object directory (absent: nothing is read from it): itself, the links
// in it and in its pack and fan-out directories, and its alternates.
Result<void> object_dir_under(Walk& w, const fs::path& dir, int depth) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) return {};
  if (++w.object_dirs > kMaxObjectDirs) {
    return refused("more than " + std::to_string(kMaxObjectDirs) + " object directories (alternates)");
  }
  auto real = resolved_under(w, "the object directory", dir);
  if (!real) return tl::unexpected(real.error());
  if (auto r = links_under(w, *real, true); !r) return r;
  return alternates_under(w, *real, depth);
}

// One git directory: itself, the common directory its `commondir` names (a
// worktree's), and the object directories of both.
Result<void> git_dir_under(Walk& w, const fs::path& dir) {
  auto real = resolved_under(w, "the git directory", dir);
  if (!real) return tl::unexpected(real.error());
  if (auto r = object_dir_under(w, *real / "objects", 0); !r) return r;
  auto common = pointer_line(*real / "commondir");
  if (!common) return tl::unexpected(common.error());
  if (!*common) return {};
  auto common_real = resolved_under(w, "the common directory", path_from(*real, **common));
  if (!common_real) return tl::unexpected(common_real.error());
  return object_dir_under(w, *common_real / "objects", 0);
}

// The git directories the repository may be opened as (this directory
// only, never a parent's): the directory itself, and its `.git` directory
// or the directory its `.git` file names ("gitdir: PATH").
Result<std::vector<fs::path>> git_dirs_of(const fs::path& repo) {
  std::vector<fs::path> dirs{repo};
  const fs::path dotgit = repo / ".git";
  std::error_code ec;
  const auto st = fs::symlink_status(dotgit, ec);
  if (st.type() == fs::file_type::not_found || ec) return dirs;
  if (st.type() != fs::file_type::regular) {
    dirs.push_back(dotgit);
    return dirs;
  }
  auto line = pointer_line(dotgit);
  if (!line) return tl::unexpected(line.error());
  const std::string prefix = "gitdir:";
  if (*line && (*line)->rfind(prefix, 0) == 0) {
    std::string target = (*line)->substr(prefix.size());
    target.erase(0, target.find_first_not_of(" \t"));
    dirs.push_back(path_from(repo, target));
  }
  return dirs;
}

}  // namespace

bool is_under_root(const std::string& path, const std::string& root) {
  return path == root || path.rfind(root == "/" ? root : root + "/", 0) == 0;
}

Result<void> check_repository_under_root(const std::string& repo, const std::string& root) {
  Walk w{root};
  auto dirs = git_dirs_of(repo);
  if (!dirs) return tl::unexpected(dirs.error());
  for (const auto& d : *dirs) {
    if (auto r = git_dir_under(w, d); !r) return r;
  }
  return {};
}

}  // namespace courier::service
