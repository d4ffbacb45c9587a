// scratch_dir.hpp — private directories made with mkdtemp(3): fresh, mode
// 0700, under a name nobody else can have taken.
#pragma once

#include <string>

#include "courier/result.hpp"

namespace courier::sys {

// Creates a directory named `prefix` followed by six random characters
// (e.g. "/tmp/x-" gives "/tmp/x-Ab3dE9"), mode 0700, and returns its path.
// Errors: os_error (with errno's text).
Result<std::string> make_unique_dir(const std::string& prefix);

// `base` + "/git-courier-<effective uid>": the name of this user's own
// directory under a temporary directory.
std::string user_dir_name(const std::string& base);

}  // namespace courier::sys
