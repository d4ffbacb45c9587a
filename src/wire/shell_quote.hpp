// shell_quote.hpp — a string quoted for a POSIX shell exactly as git quotes
// the repository path it asks an ssh server to run git-receive-pack on
// (git's sq_quote_buf in quote.c): the server's login shell reads it, so
// the bytes must come out as git's would, or a server that matches the
// command line (forges, git-shell, authorized_keys command= wrappers) sees
// another command than git's.
#pragma once

#include <string>
#include <string_view>

namespace courier::wire {

// The whole string in single quotes; each "'" becomes '\'' and each "!"
// becomes '\!' (git quotes "!" too: a csh-like login shell expands it even
// inside single quotes). No other byte is touched.
std::string shell_quote(std::string_view s);

}  // namespace courier::wire
