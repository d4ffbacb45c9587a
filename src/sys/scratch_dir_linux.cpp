// scratch_dir_linux.cpp — mkdtemp(3) behind a Result.
#include "sys/scratch_dir.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>

#include "sys/io.hpp"

namespace courier::sys {

Result<std::string> make_unique_dir(const std::string& prefix) {
  std::string path = prefix + "XXXXXX";
  if (!::mkdtemp(path.data())) return tl::unexpected(os_error("mkdtemp " + path, errno));
  return path;
}

std::string user_dir_name(const std::string& base) { return base + "/git-courier-" + std::to_string(::geteuid()); }

}  // namespace courier::sys
