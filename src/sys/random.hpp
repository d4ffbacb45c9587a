// random.hpp — random bytes from the kernel (getrandom), for identifiers.
#pragma once

#include <cstddef>
#include <string>

#include "courier/result.hpp"

namespace courier::sys {

// n bytes from getrandom(2) (blocks only before the pool is first seeded).
// Errors: os_error.
Result<std::string> random_bytes(std::size_t n);

}  // namespace courier::sys
