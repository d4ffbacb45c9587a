// file.hpp — a file of our own by path and by offset: the child's pack
// spool (created new, written, then read back at offsets by the upload).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "courier/result.hpp"
#include "sys/fd.hpp"

namespace courier::sys {

// open(path, O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, mode): a file that did not
// exist (nor did a symbolic link by that name), open for reading and
// writing. Errors: os_error naming the path (EEXIST included).
Result<ScopedFd> create_new_file(const std::string& path, unsigned mode);

// pread(2) retried on EINTR: up to len bytes from `offset`, without moving
// the file offset. 0 means end of file. Errors: os_error.
Result<std::size_t> read_at(int fd, char* buf, std::size_t len, std::uint64_t offset);

}  // namespace courier::sys
