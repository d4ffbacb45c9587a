// fd_limit_linux.cpp — RLIMIT_NOFILE through getrlimit(2) and setrlimit(2).
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "sys/fd_limit.hpp"

namespace courier::sys {

namespace {
// The kernel refuses a soft limit above fs.nr_open (1,048,576 by default),
// so an unlimited hard limit is raised to at most that.
constexpr rlim_t kNrOpenDefault = 1'048'576;
}  // namespace

Result<FdLimit> raise_fd_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return fail(Errc::os_error, std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
  }
  FdLimit out;
  out.soft_before = lim.rlim_cur;
  const rlim_t target = lim.rlim_max == RLIM_INFINITY ? kNrOpenDefault : lim.rlim_max;
  out.hard = target;
  if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= target) {
    out.soft = lim.rlim_cur == RLIM_INFINITY ? target : lim.rlim_cur;
    return out;
  }
  lim.rlim_cur = target;
  if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return fail(Errc::os_error, std::string("setrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
  }
  out.soft = target;
  return out;
}

}  // namespace courier::sys
