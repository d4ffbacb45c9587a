// fd_limit.hpp — the process's descriptor limit (RLIMIT_NOFILE): read, and
// its soft limit raised to the hard one, so that a service's connection
// capacity is set by the operator's hard limit rather than the common soft
// default of 1,024.
#pragma once

#include <cstdint>

#include "courier/result.hpp"

namespace courier::sys {

struct FdLimit {
  std::uint64_t soft_before = 0;  // the soft limit found
  std::uint64_t soft = 0;         // the soft limit now (the hard one, unless that is unlimited)
  std::uint64_t hard = 0;
};

// Raises the soft RLIMIT_NOFILE to the hard limit (an unlimited hard limit
// is read as the kernel's nr_open ceiling, 1,048,576). Errors: os_error.
Result<FdLimit> raise_fd_limit();

}  // namespace courier::sys
