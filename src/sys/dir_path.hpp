// dir_path.hpp — a directory named by a user, read as the name of its last
// component, so that O_NOFOLLOW means what it says (rule H1).
//
// The kernel follows a symbolic link named by the last component when a
// slash comes after it, O_NOFOLLOW or not: open("link/", O_NOFOLLOW) opens
// the link's target, and so do "link//" and "link/." ("." is then the last
// component, and "link" an ordinary, followed, middle one). A planted link
// would get past every "not a symbolic link" check that way.
#pragma once

#include <string>
#include <string_view>

#include "courier/result.hpp"

namespace courier::sys {

// `path` without its trailing slashes ("/" stays "/"). Errors:
// invalid_argument, naming `what` and the path, for an empty path or one
// whose last component is "." or ".." (name the directory itself).
Result<std::string> directory_path(std::string_view path, std::string_view what);

}  // namespace courier::sys
