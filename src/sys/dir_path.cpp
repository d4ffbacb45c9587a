// dir_path.cpp — directory_path: the last component of a directory's name
// made the one that O_NOFOLLOW judges (dir_path.hpp).
#include "sys/dir_path.hpp"

namespace courier::sys {

Result<std::string> directory_path(std::string_view path, std::string_view what) {
  if (path.empty()) return fail(Errc::invalid_argument, "the " + std::string(what) + " path is empty");
  std::string out(path);
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  const auto slash = out.rfind('/');
  const std::string_view last =
      slash == std::string::npos ? std::string_view(out) : std::string_view(out).substr(slash + 1);
  if (last == "." || last == "..") {
    return fail(Errc::invalid_argument, std::string(what) + " " + std::string(path) + " is refused: it ends in '" +
                                            std::string(last) +
                                            "'; name the directory itself (a symbolic link before it would be "
                                            "followed)");
  }
  return out;
}

}  // namespace courier::sys
