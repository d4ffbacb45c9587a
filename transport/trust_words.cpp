// trust_words.cpp — the trust anchor and its advice in words.
#include "transport/trust_words.hpp"

#include <curl/curl.h>

#include <cstdlib>

namespace courier::transport {

namespace {

// The system store as libcurl reads it in this process (trust_options in
// http_leg.cpp sets SSL_CERT_FILE / SSL_CERT_DIR over libcurl's defaults).
std::string system_store_files() {
  const char* file = std::getenv("SSL_CERT_FILE");
  const char* dir = std::getenv("SSL_CERT_DIR");
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  if (!file || !*file) file = info && info->cainfo ? info->cainfo : nullptr;
  if (!dir || !*dir) dir = info && info->capath ? info->capath : nullptr;
  std::string out;
  if (file) out = file;
  if (dir) out += (out.empty() ? "" : ", ") + std::string(dir);
  return out.empty() ? "the TLS library's defaults" : out;
}

}  // namespace

std::string trust_anchor_words(const std::optional<std::string>& ca_file, const std::optional<std::string>& source) {
  if (!ca_file) return "the system store (" + system_store_files() + ")";
  std::string words = "the CA file " + *ca_file;
  if (source && *source == "--ca-file") return words + " (--ca-file, trusted alone)";
  if (source && !source->empty()) words += " (" + *source + ")";
  return words;
}

std::string trust_hint(const std::optional<std::string>& ca_file, const std::optional<std::string>& source) {
  constexpr const char* kPin = "pass --ca-file FILE (the CA that signed the server's certificate)";
  if (!ca_file) return std::string(kPin) + ", or set http.sslCAInfo or GIT_SSL_CAINFO to that CA's file";
  const std::string check = "check that " + *ca_file + " holds the CA that signed the server's certificate";
  if (source && *source == "--ca-file") return check;
  if (source && *source == "GIT_SSL_CAINFO") {
    return check + " (GIT_SSL_CAINFO is read over http.sslCAInfo), or " + kPin;
  }
  return check + ", or " + kPin;
}

}  // namespace courier::transport
