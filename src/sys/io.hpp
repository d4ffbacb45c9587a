// io.hpp — descriptor I/O with errno converted to Error in one place.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "courier/result.hpp"
#include "sys/fd.hpp"

namespace courier::sys {

// Error{os_error} with "what: strerror(errno)". The one errno converter.
Error os_error(const std::string& what, int err);

// read(2) retried on EINTR. 0 means end of file. Errors: os_error
// (EAGAIN is returned as an error with the message "would block"; use
// read_nonblocking to tell it apart).
Result<std::size_t> read_some(int fd, char* buf, std::size_t len);

enum class ReadStatus { data, eof, would_block };
struct ReadResult {
  ReadStatus status;
  std::size_t bytes = 0;
};
// For O_NONBLOCK descriptors. A connection reset (a socket whose peer
// closed with our bytes unread) is end-of-file. Errors: os_error.
Result<ReadResult> read_nonblocking(int fd, char* buf, std::size_t len);

// write(2) retried on EINTR and short writes, for blocking descriptors.
// Errors: disk_full (ENOSPC, EDQUOT), os_error.
Result<void> write_all(int fd, const char* buf, std::size_t len);

// For O_NONBLOCK descriptors: how many bytes the kernel took (0 = would block).
// Errors: os_error (EPIPE included: the reader is gone).
Result<std::size_t> write_nonblocking(int fd, const char* buf, std::size_t len);

Result<void> set_nonblocking(int fd);

struct Pipe {
  ScopedFd read_end;
  ScopedFd write_end;
};
// pipe2(O_CLOEXEC). Errors: os_error.
Result<Pipe> make_pipe();

// Duplicates fd to the lowest free number >= min_fd, close-on-exec.
Result<ScopedFd> dup_at_least(int fd, int min_fd);

// Descriptors open in this process (from /proc/self/fd), sorted.
std::vector<int> open_fds();

}  // namespace courier::sys
