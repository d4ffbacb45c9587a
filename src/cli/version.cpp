// version.cpp — the version text: this build's version (CMake's
// project(VERSION), as COURIER_VERSION), then the versions of libgit2 and
// libcurl it was built with, from their headers. Asking the libraries
// themselves would load them, and --version is meant to start cheaply
// (docs/design.md "A cheap start"); the library versions in use are those
// with the same SONAME (libgit2.so.1.5, libcurl.so.4), which the loader
// checks when a command needs them.
#include "cli/version.hpp"

#include <curl/curlver.h>
#include <git2/version.h>

#include "protocol/messages.hpp"

namespace courier::cli {

std::string version_text() {
  std::string out = std::string("git-courier ") + COURIER_VERSION + "\n";
  out += "protocol " + std::to_string(protocol::kProtocolVersion) +
         ", built with libgit2 " LIBGIT2_VERSION ", libcurl " LIBCURL_VERSION "\n";
  return out;
}

}  // namespace courier::cli
