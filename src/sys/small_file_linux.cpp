// small_file_linux.cpp — open, fstat and read of a user-named small file.
#include "sys/small_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "sys/fd.hpp"

namespace courier::sys {

namespace {

Error problem(const std::string& why) { return Error{Errc::invalid_argument, why}; }

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is not a regular file (a FIFO)";
  if (S_ISCHR(mode)) return "is not a regular file (a character device)";
  if (S_ISBLK(mode)) return "is not a regular file (a block device)";
  if (S_ISSOCK(mode)) return "is not a regular file (a socket)";
  return "is not a regular file";
}

}  // namespace

Result<SmallFile> read_small_regular_file(const std::string& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer,
  // with no deadline and deaf to SIGTERM. It does not affect regular files.
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
  if (!fd) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return tl::unexpected(problem("no such file"));
    if (err == ELOOP) return tl::unexpected(problem("is a symbolic link (not followed: name the file itself)"));
    if (err == EACCES || err == EPERM) return tl::unexpected(problem("cannot be read (permissions?)"));
    return tl::unexpected(problem(std::string("cannot be opened: ") + std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return tl::unexpected(problem(std::string("fstat failed: ") + std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return tl::unexpected(problem(kind_of(st.st_mode)));
  const auto too_large = [&] { return problem("is larger than " + std::to_string(max_bytes) + " bytes"); };
  if (st.st_size < 0 || static_cast<std::uint64_t>(st.st_size) > max_bytes) return tl::unexpected(too_large());
  SmallFile out;
  out.mode = static_cast<unsigned>(st.st_mode & 07777);
  // Read up to one byte past the cap: a file that grew after fstat is still refused.
  out.bytes.resize(max_bytes + 1);
  std::size_t got = 0;
  while (got < out.bytes.size()) {
    const ssize_t n = ::read(fd.get(), out.bytes.data() + got, out.bytes.size() - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      std::memset(out.bytes.data(), 0, got);
      return tl::unexpected(problem(std::string("read error: ") + std::strerror(err)));
    }
    got += static_cast<std::size_t>(n);
  }
  if (got > max_bytes) {
    std::memset(out.bytes.data(), 0, got);
    return tl::unexpected(too_large());
  }
  out.bytes.resize(got);
  return out;
}

}  // namespace courier::sys
