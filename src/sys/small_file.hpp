// small_file.hpp — reading a small file named by a user (a key, a token)
// without letting the name block us, flood us or lead us elsewhere.
#pragma once

#include <cstddef>
#include <string>

#include "courier/result.hpp"

namespace courier::sys {

// The cap for secrets read whole: keys and tokens are a few hundred bytes.
inline constexpr std::size_t kMaxSecretFile = 64 * 1024;

struct SmallFile {
  std::string bytes;
  unsigned mode = 0;  // the permission bits (st_mode & 07777)
};

// Opens `path` with O_RDONLY|O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC (a FIFO cannot
// block the open, a symbolic link is not followed), refuses anything fstat
// does not call a regular file (FIFOs, devices such as /dev/zero, sockets,
// directories) and any file over max_bytes, and reads it whole. Errors:
// invalid_argument with a message naming the problem ("no such file", "is a
// symbolic link ...", "is not a regular file ...", "is larger than ..."), meant
// to follow the caller's description of the file.
Result<SmallFile> read_small_regular_file(const std::string& path, std::size_t max_bytes);

}  // namespace courier::sys
