// tls_sessions.cpp — the TLS session cache a delivery's legs share (a
// libcurl share handle with CURL_LOCK_DATA_SSL_SESSION only).
#include "transport/tls_sessions.hpp"

#include <curl/curl.h>

#include <string>

#include "transport/http_leg.hpp"

namespace courier::transport {

Result<TlsSessions> TlsSessions::make() {
  init_transport();
  CURLSH* share = curl_share_init();
  if (!share) return fail(Errc::curl_refused, "curl_share_init failed");
  const CURLSHcode rc = curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  if (rc != CURLSHE_OK) {
    curl_share_cleanup(share);
    return fail(Errc::curl_refused, std::string("sharing TLS sessions: ") + curl_share_strerror(rc));
  }
  return TlsSessions(share);
}

TlsSessions::TlsSessions(TlsSessions&& other) noexcept : share_(other.share_) { other.share_ = nullptr; }

TlsSessions::~TlsSessions() {
  if (share_) curl_share_cleanup(static_cast<CURLSH*>(share_));
}

}  // namespace courier::transport
