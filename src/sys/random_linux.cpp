// random_linux.cpp — random bytes through getrandom(2).
#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "sys/random.hpp"

namespace courier::sys {

Result<std::string> random_bytes(std::size_t n) {
  std::string out(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::getrandom(out.data() + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return fail(Errc::os_error, std::string("getrandom: ") + std::strerror(errno));
    }
    got += static_cast<std::size_t>(r);
  }
  return out;
}

}  // namespace courier::sys
