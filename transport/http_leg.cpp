// http_leg.cpp — one push leg over libcurl; the one place libcurl errors are
// converted to Error.
#include "transport/http_leg.hpp"

#include <curl/curl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "wire/text.hpp"

namespace courier::transport {

namespace {

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};

bool is_loopback_host(const std::string& host) {
  if (host == "[::1]" || host == "::1") return true;
  // 127.0.0.0/8 as a dotted quad of digits only.
  if (host.rfind("127.", 0) != 0) return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.') ++dots;
    else if (c < '0' || c > '9') return false;
  }
  return dots == 3;
}

struct Transfer {
  const LegOptions* opt = nullptr;
  CURL* curl = nullptr;
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  bool aborted_by_sender = false;
  std::optional<Error> sink_error;
  std::string error_body;  // first bytes of a non-200 body, for the message
  bool checked_status = false;
  long status = 0;
};

long response_code(CURL* c) {
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  return code;
}

std::size_t on_write(char* data, std::size_t size, std::size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  const std::size_t len = size * n;
  if (!t->checked_status) {
    t->checked_status = true;
    t->status = response_code(t->curl);
  }
  if (t->status != 200) {
    if (t->error_body.size() < 512) t->error_body.append(data, std::min<std::size_t>(len, 512 - t->error_body.size()));
    return len;
  }
  t->received += len;
  if (t->received > t->opt->max_body) {
    t->sink_error = Error{Errc::body_too_large, "the response body exceeds " + std::to_string(t->opt->max_body) + " bytes"};
    return CURL_WRITEFUNC_ERROR;
  }
  if (t->opt->on_body) {
    if (auto r = t->opt->on_body(std::string_view(data, len)); !r) {
      t->sink_error = r.error();
      return CURL_WRITEFUNC_ERROR;
    }
  }
  return len;
}

std::size_t on_read(char* buf, std::size_t size, std::size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  const std::size_t room = size * n;
  if (t->sent >= t->opt->body_len) return 0;
  // T3: the deadline and authority are checked before every chunk.
  if (sys::mono_now_ns() >= t->opt->deadline || (t->opt->may_send && !t->opt->may_send())) {
    t->aborted_by_sender = true;
    return CURL_READFUNC_ABORT;
  }
  std::size_t out = 0;
  const auto& prefix = t->opt->body_prefix;
  if (t->sent < prefix.size()) {
    out = std::min<std::size_t>(room, prefix.size() - static_cast<std::size_t>(t->sent));
    std::memcpy(buf, prefix.data() + t->sent, out);
  } else {
    const std::uint64_t offset = t->sent - prefix.size();
    const std::uint64_t left = t->opt->body_len - t->sent;
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(room, left));
    ssize_t r;
    do {
      r = ::pread(t->opt->body_fd, buf, want, static_cast<off_t>(offset));
    } while (r < 0 && errno == EINTR);
    if (r <= 0) {
      t->sink_error = Error{Errc::leg_aborted, "reading the spooled pack failed"};
      return CURL_READFUNC_ABORT;
    }
    out = static_cast<std::size_t>(r);
  }
  t->sent += out;
  if (t->opt->on_upload) t->opt->on_upload(t->sent, t->opt->body_len);
  return out;
}

int on_progress(void* p, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(p);
  return sys::mono_now_ns() >= t->opt->deadline ? 1 : 0;
}

long remaining_ms(sys::MonoNs deadline) {
  const sys::MonoNs left = deadline - sys::mono_now_ns();
  if (left <= 0) return 0;
  return static_cast<long>((left + sys::kNsPerMs - 1) / sys::kNsPerMs);
}

}  // namespace

void init_transport() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

Result<void> check_remote_scheme(std::string_view url, bool allow_http_loopback) {
  std::unique_ptr<CURLU, UrlDeleter> u(curl_url());
  const std::string s(url);
  if (!u || curl_url_set(u.get(), CURLUPART_URL, s.c_str(), 0) != CURLUE_OK) {
    return fail(Errc::scheme_refused, "malformed remote URL '" + wire::printable(url) + "'");
  }
  char* scheme = nullptr;
  char* host = nullptr;
  curl_url_get(u.get(), CURLUPART_SCHEME, &scheme, 0);
  curl_url_get(u.get(), CURLUPART_HOST, &host, 0);
  const std::string sc = scheme ? scheme : "";
  const std::string h = host ? host : "";
  curl_free(scheme);
  curl_free(host);
  if (sc == "https") return {};
  if (sc == "http") {
    if (!is_loopback_host(h)) {
      return fail(Errc::scheme_refused, "plain http:// is refused for " + wire::printable(h) + ": only https, or http to loopback");
    }
    if (!allow_http_loopback) {
      return fail(Errc::scheme_refused, "plain http:// to loopback needs allow_http_loopback (--allow-http-loopback)");
    }
    return {};
  }
  return fail(Errc::scheme_refused, "scheme '" + wire::printable(sc) + "' is refused: only https");
}

Result<LegResult> perform_leg(const LegOptions& opt) {
  init_transport();
  if (auto ok = check_remote_scheme(opt.url, opt.allow_http_loopback); !ok) return tl::unexpected(ok.error());
  if (remaining_ms(opt.deadline) <= 0) return fail(Errc::leg_timeout, "the deadline passed before the leg started");
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return fail(Errc::connect_failed, "curl_easy_init failed");
  CURL* c = curl.get();
  Transfer t;
  t.opt = &opt;
  t.curl = c;

  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add_header = [&](const std::string& h) {
    headers.reset(curl_slist_append(headers.release(), h.c_str()));
  };
  add_header("Expect:");  // no 100-continue round trip
  add_header("User-Agent: git-courier/" COURIER_VERSION);
  add_header("Pragma: no-cache");
  if (!opt.accept.empty()) add_header("Accept: " + opt.accept);
  if (opt.authorization) add_header(*opt.authorization);
  if (opt.method == "POST") add_header("Content-Type: " + opt.content_type);

  curl_easy_setopt(c, CURLOPT_URL, opt.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, opt.allow_http_loopback ? "https,http" : "https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(c, CURLOPT_PROXY, "");     // never a proxy from the environment
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  const char* cert_file = std::getenv("SSL_CERT_FILE");
  const char* cert_dir = std::getenv("SSL_CERT_DIR");
  if (opt.ca_file) {
    // T1: a CA file pins trust. Setting CAINFO alone keeps libcurl's built-in
    // CA directory (Debian's is /etc/ssl/certs), and SSL_CERT_DIR would add
    // another: the directory is cleared so the file is the only anchor.
    curl_easy_setopt(c, CURLOPT_CAINFO, opt.ca_file->c_str());
    curl_easy_setopt(c, CURLOPT_CAPATH, nullptr);
  } else {
    if (cert_file && *cert_file) curl_easy_setopt(c, CURLOPT_CAINFO, cert_file);
    if (cert_dir && *cert_dir) curl_easy_setopt(c, CURLOPT_CAPATH, cert_dir);
  }
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, remaining_ms(opt.deadline));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, remaining_ms(opt.deadline));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, nullptr);
  if (opt.method == "POST") {
    // T2: never replayed. A fresh connection that is closed afterwards, and
    // no seek callback, so libcurl cannot rewind the body to send it again.
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(opt.body_len));
    curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(c, CURLOPT_READDATA, &t);
  } else {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  }

  const CURLcode rc = curl_easy_perform(c);
  LegResult out;
  out.status = response_code(c);
  out.bytes_sent = t.sent;
  out.bytes_received = t.received;
  char* ct = nullptr;
  curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
  if (ct) out.content_type = ct;

  if (t.aborted_by_sender) {
    return fail(Errc::leg_aborted, sys::mono_now_ns() >= opt.deadline ? "upload stopped: the deadline passed"
                                                                      : "upload stopped: authority withdrawn");
  }
  if (t.sink_error) return tl::unexpected(*t.sink_error);
  const std::string what = opt.method + " " + wire::printable(opt.url);
  if (rc != CURLE_OK) {
    const std::string detail = std::string(curl_easy_strerror(rc));
    switch (rc) {
      case CURLE_OPERATION_TIMEDOUT:
      case CURLE_ABORTED_BY_CALLBACK:
        return fail(Errc::leg_timeout, what + ": the deadline passed (" + detail + ")");
      case CURLE_SSL_CONNECT_ERROR:
      case CURLE_PEER_FAILED_VERIFICATION:
      case CURLE_SSL_CACERT_BADFILE:
      case CURLE_SSL_CERTPROBLEM:
        return fail(Errc::tls_failed, what + ": TLS failed: " + detail);
      case CURLE_COULDNT_CONNECT:
      case CURLE_COULDNT_RESOLVE_HOST:
        return fail(Errc::connect_failed, what + ": " + detail);
      case CURLE_UNSUPPORTED_PROTOCOL:
        return fail(Errc::scheme_refused, what + ": " + detail);
      default:
        if (out.status != 0 && out.status != 200) break;  // reported by status below
        return fail(Errc::connect_failed, what + ": " + detail);
    }
  }
  if (out.status >= 300 && out.status < 400) {
    char* location = nullptr;
    curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &location);
    return fail(Errc::http_redirect, what + ": the server answered " + std::to_string(out.status) +
                                         " (redirect to " + wire::printable(location ? location : "?") +
                                         "); redirects are never followed");
  }
  if (out.status == 401 || out.status == 403) {
    return fail(Errc::http_auth, what + ": the server answered " + std::to_string(out.status));
  }
  if (out.status != 200) {
    return fail(Errc::http_status, what + ": the server answered " + std::to_string(out.status) +
                                       (t.error_body.empty() ? "" : ": " + wire::printable(t.error_body)));
  }
  return out;
}

}  // namespace courier::transport
