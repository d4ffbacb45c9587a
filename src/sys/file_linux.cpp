// file_linux.cpp — the raw calls behind file.hpp.
#include "sys/file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <limits>

#include "sys/io.hpp"

namespace courier::sys {

Result<ScopedFd> create_new_file(const std::string& path, unsigned mode) {
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
    if (fd >= 0) return ScopedFd(fd);
    if (errno == EINTR) continue;
    return tl::unexpected(os_error("creating " + path, errno));
  }
}

Result<std::size_t> read_at(int fd, char* buf, std::size_t len, std::uint64_t offset) {
  if (offset > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max())) {
    return tl::unexpected(os_error("pread", EOVERFLOW));
  }
  for (;;) {
    const ssize_t n = ::pread(fd, buf, len, static_cast<off_t>(offset));
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    return tl::unexpected(os_error("pread", errno));
  }
}

}  // namespace courier::sys
