// version.cpp — the version text: this build's version (CMake's
// project(VERSION), as COURIER_VERSION), then the libraries it runs with.
// The library versions are asked of the libraries themselves at run time, so
// they name what is loaded, not what the build saw.
#include "cli/version.hpp"

#include <curl/curl.h>
#include <git2.h>

#include "protocol/messages.hpp"

namespace courier::cli {

std::string version_text() {
  int major = 0, minor = 0, rev = 0;
  git_libgit2_version(&major, &minor, &rev);
  const curl_version_info_data* curl = curl_version_info(CURLVERSION_NOW);
  std::string out = std::string("git-courier ") + COURIER_VERSION + "\n";
  out += "protocol " + std::to_string(protocol::kProtocolVersion) + ", libgit2 " + std::to_string(major) + "." +
         std::to_string(minor) + "." + std::to_string(rev);
  if (curl != nullptr) {
    out += std::string(", libcurl ") + curl->version;
    if (curl->ssl_version != nullptr) out += std::string(" (") + curl->ssl_version + ")";
  }
  return out + "\n";
}

}  // namespace courier::cli
