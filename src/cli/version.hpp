// version.hpp — what `git-courier --version` prints.
#pragma once

#include <string>

namespace courier::cli {

// "git-courier 0.1.0\n" and a second line with the protocol version and the
// versions of libgit2, libcurl and its TLS library as loaded at run time.
std::string version_text();

}  // namespace courier::cli
