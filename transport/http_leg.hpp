// http_leg.hpp — one HTTP request of a push ("leg") over libcurl, with the
// transport rules built in (T1–T3):
//  * https only; plain http only to 127.0.0.0/8 or ::1, and only when allowed;
//  * TLS verification always on; the job's CA file, when given, is the only
//    trust anchor (it pins), else SSL_CERT_FILE / SSL_CERT_DIR; proxies
//    from the environment never read: a proxy is the job's, and only an
//    HTTP CONNECT tunnel through it (TLS stays end to end with the origin,
//    verified against the origin's name; the Authorization header goes to
//    the origin only, Proxy-Authorization to the proxy only);
//  * HTTP/1.1, no "Expect: 100-continue", redirects never followed: any
//    status but 200 ends the leg with that status in the error;
//  * a POST on a fresh connection that is never reused, with no seek
//    callback, so libcurl can never replay it (a spooled body or a streamed
//    one alike);
//  * every wait bounded by the absolute deadline, which is checked again
//    before each upload chunk (a withdrawn authority is enforced by the
//    parent's kill, A4: the child holds no authority of its own to check).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "courier/result.hpp"
#include "sys/clock.hpp"

namespace courier::transport {

class TlsSessions;

struct LegOptions {
  std::string method = "GET";  // GET | POST
  std::string url;
  // The repository the leg is for (canonical, no user information), named
  // in messages: "repository not found at <remote>". Empty: the url.
  std::string remote;
  std::optional<std::string> authorization;  // a whole header line, "Authorization: ..."
  std::optional<std::string> ca_file;
  // Where ca_file came from ("GIT_SSL_CAINFO", ...), named with the anchor
  // in a TLS failure (trust_words.hpp). None: not said.
  std::optional<std::string> ca_source;
  // The unauthenticated advertisement GET of --auth credential (T2): a 401
  // is the server's challenge, returned as a result with status 401 (no
  // error), so that the caller asks for credentials and sends the GET once
  // more. Every other status is judged as usual.
  bool challenge = false;
  // A TLS session cache shared with the delivery's other leg (null: none):
  // the POST resumes the GET's session on its own fresh connection.
  const TlsSessions* tls_sessions = nullptr;
  // An http:// proxy (no user information) to tunnel through with CONNECT;
  // none: a direct connection. Its credentials, when it has any, come as a
  // whole header line, "Proxy-Authorization: Basic ...", sent to the proxy
  // only (and preemptively: no challenge round trip).
  std::optional<std::string> proxy;
  std::optional<std::string> proxy_authorization;
  bool allow_http_loopback = false;
  sys::MonoNs deadline = 0;
  std::string content_type;  // POST only
  std::string accept;        // the response type we expect
  // POST body: body_prefix, then body_len - body_prefix.size() bytes read
  // from body_fd (a spooled pack, read from offset 0). Sent as git sends a
  // request body: with a Content-Length up to kChunkedBodyAbove bytes,
  // chunked above it (spooled_body_chunked).
  std::string body_prefix;
  int body_fd = -1;
  std::uint64_t body_len = 0;
  // A streamed POST body instead (no body_fd, no body_len): body_prefix,
  // then what body_source yields, sent chunked (Transfer-Encoding: chunked,
  // no Content-Length) as it comes. It is called from libcurl's read
  // callback with room for up to `n` bytes; it may block, but never past
  // the deadline, and returns how many bytes it wrote, 0 for the end of the
  // body, or an error, which aborts the leg before the terminating chunk
  // (the server never sees a complete body).
  std::function<Result<std::size_t>(char*, std::size_t)> body_source;
  // Told how much of the request body libcurl has taken (sent, total;
  // total 0 for a streamed body, whose length is known only at its end).
  std::function<void(std::uint64_t, std::uint64_t)> on_upload;
  // Receives the 200 response body as it arrives; an error aborts the leg.
  std::function<Result<void>(std::string_view)> on_body;
  // The response body may not exceed this many bytes.
  std::uint64_t max_body = 64ull * 1024 * 1024;
  // Tests only: one more libcurl option (a CURLoption number and a long
  // value), set after the leg's own. It lets a test make an option fail on
  // purpose and see the leg end before any byte is sent.
  struct ExtraOption {
    int id = 0;
    long value = 0;
  };
  std::optional<ExtraOption> test_extra_option;
};

// git's http.postBuffer default: git sends a request body larger than
// this chunked (Transfer-Encoding: chunked), a smaller one with a
// Content-Length. A spooled body follows the same rule, so a server sees a
// large push in the same shape whatever sent it or however it is
// authenticated (git http-backend, for one, copies a Content-Length body
// into receive-pack 8 KiB at a time, where receive-pack reads a chunked
// one, which reaches it without a length, straight from its own stdin:
// docs/performance.md, "Large push with --auth key:").
inline constexpr std::uint64_t kChunkedBodyAbove = 1024 * 1024;

// How much of a spooled body libcurl reads (from the spool's page cache)
// per read callback: each read is one chunk of a chunked body.
inline constexpr long kSpoolReadBytes = 512 * 1024;

// Whether a POST with this spooled body (body_fd) is sent chunked.
inline bool spooled_body_chunked(std::uint64_t body_len) { return body_len > kChunkedBodyAbove; }

struct LegResult {
  long status = 0;
  std::string content_type;
  std::uint64_t bytes_sent = 0;      // request body bytes libcurl took
  std::uint64_t bytes_received = 0;  // response body bytes
};

// Every libcurl option of the leg is set and checked before the request:
// an option the linked libcurl does not know or refuses ends the leg with
// curl_refused naming the option, and nothing is sent.
// Errors: scheme_refused (nothing sent; also a proxy that is not a plain
// http:// URL without user information), proxy_failed (the proxy refused
// the tunnel: 407 asks for credentials, any other status names itself),
// curl_refused (nothing sent, unless
// an info query failed after the request), tls_failed, connect_failed,
// leg_timeout (the deadline), leg_aborted (may_send said stop, or on_body
// failed: its error message is kept), http_redirect (3xx, not followed),
// http_auth (401/403), http_status (any other non-200: a 404 says
// "repository not found at <remote>"; a body the server sent with it is
// quoted, escaped and cut, unless it is HTML, which is never shown),
// body_too_large. A tls_failed names the trust anchor used (the CA file
// and its source, or the system store's files), and for an unverified
// certificate says how to trust it without suggesting what is already set
// (trust_words.hpp). With `challenge`, a 401 is a result, not an error.
Result<LegResult> perform_leg(const LegOptions& options);

// T1 as a pure check, for callers that want to refuse before any I/O.
// Errors: scheme_refused.
Result<void> check_remote_scheme(std::string_view url, bool allow_http_loopback);

// curl_global_init, once per process.
void init_transport();

}  // namespace courier::transport
