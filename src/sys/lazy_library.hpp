// lazy_library.hpp — loading the shared libraries the shipped executable
// binds lazily (libcurl, libgit2, libsqlite3, libcrypto, libmicrohttpd
// for `serve`, and libpq for a PostgreSQL state backend) where it needs
// them, so that a start that needs none of them (--version, --help, a usage
// error) loads none (docs/design.md "A cheap start").
#pragma once

#include <cstddef>
#include <initializer_list>
#include <vector>

#include "courier/result.hpp"

namespace courier::sys {

enum class SharedLibrary { curl, git2, sqlite3, crypto, microhttpd, pq };

// The exit code of a process that called into a lazily bound library it
// cannot load before anything asked for it with load_shared_library: the
// dynamic loader's own code for a library missing at start, which is what
// the same install would have given with the libraries linked directly.
inline constexpr int kExitLibraryMissing = 127;

// Loads `lib` now, once per process, and binds every function of it this
// executable calls. A no-op (success) where the library is linked directly:
// the library archive an embedder links, the test binaries, and a build
// with COURIER_LAZY_LIBS=OFF. Errors: os_error, "cannot load libcurl.so.4:
// ..." with the dynamic loader's reason (not installed, a missing
// function): the caller reports it instead of starting work it cannot do.
Result<void> load_shared_library(SharedLibrary lib);

// All of `libs`, in order; the first failure is the answer.
Result<void> load_shared_libraries(std::initializer_list<SharedLibrary> libs);

// The step under load_shared_library: opens `soname` with the dynamic
// loader and looks up each of `names` (NUL-terminated, one after the other,
// an empty name ends them; `count` of them), in order. On success the
// library stays loaded for the life of the process (the addresses point
// into it). On any failure (not found, a function missing, a count that
// does not match) it is closed again: a failed load leaves nothing mapped.
Result<std::vector<void*>> bind_library(const char* soname, const char* names, std::size_t count);

}  // namespace courier::sys
