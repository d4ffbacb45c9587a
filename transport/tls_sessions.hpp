// tls_sessions.hpp — one delivery's TLS session cache, shared by its legs:
// the receive-pack POST resumes the session the advertisement GET
// negotiated (an abbreviated handshake, no certificate sent again) while
// still opening a connection of its own (T2: fresh, never reused).
#pragma once

#include "courier/result.hpp"

namespace courier::transport {

// A libcurl share handle that shares TLS sessions only (never connections,
// cookies or DNS). Owned by one thread: the child's legs run one after the
// other, so it has no lock callbacks.
class TlsSessions {
 public:
  // Errors: curl_refused (libcurl would not make or configure the handle).
  static Result<TlsSessions> make();
  TlsSessions(TlsSessions&& other) noexcept;
  TlsSessions& operator=(TlsSessions&&) = delete;
  TlsSessions(const TlsSessions&) = delete;
  TlsSessions& operator=(const TlsSessions&) = delete;
  ~TlsSessions();
  // The CURLSH* for CURLOPT_SHARE.
  void* handle() const { return share_; }

 private:
  explicit TlsSessions(void* share) : share_(share) {}
  void* share_ = nullptr;
};

}  // namespace courier::transport
