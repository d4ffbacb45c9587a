// http_leg.cpp — one push leg over libcurl; with curl_options.cpp, the one
// place libcurl errors are converted to Error.
//
// A leg runs in stages, each a function below with its contract:
//   check_before_io     the rules that refuse without I/O (T1 scheme, D1)
//   leg_headers         the request's header lines
//   leg_option_table    every libcurl option of the leg, as a table built
//                       from named groups (request, proxy, trust, timing,
//                       exchange, method); set_options sets it row by row, and the
//                       first option libcurl refuses ends the leg before a
//                       byte is sent, naming the option
//   curl_easy_perform   the one request
//   judge_leg           what happened, as a LegResult or an Error
#include "transport/http_leg.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

#include "sys/file.hpp"
#include "transport/curl_options.hpp"
#include "transport/tls_sessions.hpp"
#include "transport/trust_words.hpp"
#include "wire/remote.hpp"
#include "wire/text.hpp"

namespace courier::transport {

namespace {

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using HeaderList = std::unique_ptr<curl_slist, SlistDeleter>;

// ---- the transfer's callbacks ----

struct Transfer {
  const LegOptions* opt = nullptr;
  CURL* curl = nullptr;
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  bool aborted_by_sender = false;
  bool body_ended = false;  // a streamed body's source said the end
  std::optional<Error> sink_error;
  std::string error_body;                 // first bytes of a non-200 body, for the message
  char error_text[CURL_ERROR_SIZE] = {};  // libcurl's own words for a failure (CURLOPT_ERRORBUFFER)
  bool checked_status = false;
  long status = 0;
};

std::size_t on_write(char* data, std::size_t size, std::size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  const std::size_t len = size * n;
  if (!t->checked_status) {
    auto code = response_code(t->curl);
    if (!code) {
      t->sink_error = code.error();
      return CURL_WRITEFUNC_ERROR;
    }
    t->checked_status = true;
    t->status = *code;
  }
  if (t->status != 200) {
    if (t->error_body.size() < 512) t->error_body.append(data, std::min<std::size_t>(len, 512 - t->error_body.size()));
    return len;
  }
  t->received += len;
  if (t->received > t->opt->max_body) {
    t->sink_error =
        Error{Errc::body_too_large, "the response body exceeds " + std::to_string(t->opt->max_body) + " bytes"};
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

// T3: the deadline is checked before every chunk of a body, spooled or
// streamed (authority within a leg is the parent's kill, A4). True (and the
// transfer marked as ended by us) when no more may be sent.
bool must_stop_sending(Transfer* t) {
  if (sys::mono_now_ns() < t->opt->deadline) return false;
  t->aborted_by_sender = true;
  return true;
}

// The next bytes of the request's pkt-line prefix (commands, capabilities).
std::size_t copy_prefix(Transfer* t, char* buf, std::size_t room) {
  const auto& prefix = t->opt->body_prefix;
  const std::size_t out = std::min<std::size_t>(room, prefix.size() - static_cast<std::size_t>(t->sent));
  std::memcpy(buf, prefix.data() + t->sent, out);
  return out;
}

// A streamed body: the prefix, then the source's bytes until it says the
// end. The read callback blocks inside the source (bounded by the
// deadline) rather than answering CURL_READFUNC_PAUSE: with the easy
// interface nothing but this callback could unpause the transfer, and while
// the body is unfinished there is nothing else for the transfer to do
// (receive-pack answers only after the whole pack). The deadline is checked
// before every chunk, as for a spooled body (T3).
std::size_t read_streamed(Transfer* t, char* buf, std::size_t room) {
  if (t->body_ended) return 0;
  if (must_stop_sending(t)) return CURL_READFUNC_ABORT;
  std::size_t out = 0;
  if (t->sent < t->opt->body_prefix.size()) {
    out = copy_prefix(t, buf, room);
  } else {
    auto r = t->opt->body_source(buf, room);
    if (!r) {
      t->sink_error = r.error();
      return CURL_READFUNC_ABORT;
    }
    if (*r == 0) {
      t->body_ended = true;
      return 0;
    }
    out = *r;
  }
  t->sent += out;
  if (t->opt->on_upload) t->opt->on_upload(t->sent, 0);
  return out;
}

std::size_t on_read(char* buf, std::size_t size, std::size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  const std::size_t room = size * n;
  if (t->opt->body_source) return read_streamed(t, buf, room);
  if (t->sent >= t->opt->body_len) return 0;
  if (must_stop_sending(t)) return CURL_READFUNC_ABORT;
  std::size_t out = 0;
  const auto& prefix = t->opt->body_prefix;
  if (t->sent < prefix.size()) {
    out = copy_prefix(t, buf, room);
  } else {
    const std::uint64_t offset = t->sent - prefix.size();
    const std::uint64_t left = t->opt->body_len - t->sent;
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(room, left));
    auto r = sys::read_at(t->opt->body_fd, buf, want, offset);
    if (!r || *r == 0) {
      t->sink_error = Error{Errc::leg_aborted, "reading the spooled pack failed: " +
                                                   (r ? std::string("it ended early") : r.error().message)};
      return CURL_READFUNC_ABORT;
    }
    out = *r;
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

// A POST body sent chunked: a streamed one (its length is known only at
// its end), or a spooled one larger than git's post buffer.
bool sent_chunked(const LegOptions& opt) {
  return opt.body_source || (opt.body_fd >= 0 && spooled_body_chunked(opt.body_len));
}

// ---- the stages of a leg ----

// T1: a proxy is a plain http:// URL without user information (the
// credentials travel as proxy_authorization, never in a URL libcurl could
// print or log). Errors: scheme_refused.
Result<void> check_proxy(const std::optional<std::string>& proxy) {
  if (!proxy) return {};
  auto parsed = wire::parse_url(*proxy, "proxy URL");
  if (!parsed) return fail(Errc::scheme_refused, parsed.error().message);
  if (parsed->scheme != "http" || parsed->userinfo || parsed->path != "/" || parsed->query) {
    return fail(Errc::scheme_refused, "proxy '" + wire::redact_url(*proxy) +
                                          "' refused: a leg tunnels only through http://HOST:PORT, credentials "
                                          "never in the URL");
  }
  return {};
}

// Stage 1: what a leg refuses without any I/O: a scheme T1 refuses (the
// remote's or the proxy's), a deadline already passed. Errors:
// scheme_refused, leg_timeout.
Result<void> check_before_io(const LegOptions& opt) {
  if (auto ok = check_remote_scheme(opt.url, opt.allow_http_loopback); !ok) return ok;
  if (auto ok = check_proxy(opt.proxy); !ok) return ok;
  if (remaining_ms(opt.deadline) <= 0) return fail(Errc::leg_timeout, "the deadline passed before the leg started");
  return {};
}

// Stage 2: the request's header lines: no Expect (T2), ours, the minted
// Authorization (T3). Errors: curl_refused (libcurl could not build the list).
Result<HeaderList> leg_headers(const LegOptions& opt) {
  HeaderList headers;
  bool complete = true;
  auto add_header = [&](const std::string& h) {
    // On failure libcurl leaves the list as it was (still ours to free).
    if (curl_slist* longer = curl_slist_append(headers.get(), h.c_str())) {
      (void)headers.release();
      headers.reset(longer);
    } else {
      complete = false;
    }
  };
  add_header("Expect:");  // no 100-continue round trip
  add_header("User-Agent: git-courier/" COURIER_VERSION);
  add_header("Pragma: no-cache");
  if (!opt.accept.empty()) add_header("Accept: " + opt.accept);
  if (opt.authorization) add_header(*opt.authorization);
  if (opt.method == "POST") add_header("Content-Type: " + opt.content_type);
  // A streamed body's length is known only at its end, and a large spooled
  // one goes as git sends it: chunked (HTTP/1.1).
  if (opt.method == "POST" && sent_chunked(opt)) add_header("Transfer-Encoding: chunked");
  if (!complete)
    return fail(Errc::curl_refused, "libcurl could not build the request headers; the leg was not started");
  return headers;
}

// Stage 2, the proxy's header lines: the parent's preemptive Basic
// credentials, sent in the CONNECT request only (CURLHEADER_SEPARATE), never
// to the origin. Errors: curl_refused.
Result<HeaderList> proxy_headers(const LegOptions& opt) {
  HeaderList headers;
  if (!opt.proxy || !opt.proxy_authorization) return headers;
  headers.reset(curl_slist_append(nullptr, opt.proxy_authorization->c_str()));
  if (!headers) return fail(Errc::curl_refused, "libcurl could not build the proxy's headers; the leg was not started");
  return headers;
}

// Stage 3, the option table by groups; the groups' order is the order set.

// T1 T2: the URL, https only (http only when the caller allowed loopback,
// which check_before_io has already judged), redirects never followed,
// HTTP/1.1.
OptionTable request_options(const LegOptions& opt) {
  return {
      {CURLOPT_URL, opt.url.c_str()},
      {CURLOPT_PROTOCOLS_STR, opt.allow_http_loopback ? "https,http" : "https"},
      {CURLOPT_FOLLOWLOCATION, 0L},
      {CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1)},
  };
}

// T1: the job's proxy or none, always set, so libcurl never reads a proxy
// (or no_proxy) from the environment; with one, a CONNECT tunnel for every
// scheme (an http:// loopback origin too), and the header lists kept apart:
// Authorization to the origin only, Proxy-Authorization to the proxy only.
OptionTable proxy_options(const LegOptions& opt, curl_slist* proxy_header_list) {
  OptionTable o{{CURLOPT_HEADEROPT, static_cast<long>(CURLHEADER_SEPARATE)}};
  if (!opt.proxy) {
    o.push_back({CURLOPT_PROXY, ""});
    o.push_back({CURLOPT_NOPROXY, "*"});
    return o;
  }
  o.push_back({CURLOPT_PROXY, opt.proxy->c_str()});
  o.push_back({CURLOPT_NOPROXY, ""});  // the parent applied NO_PROXY already
  o.push_back({CURLOPT_PROXYTYPE, static_cast<long>(CURLPROXY_HTTP)});
  o.push_back({CURLOPT_HTTPPROXYTUNNEL, 1L});
  if (proxy_header_list) o.push_back({CURLOPT_PROXYHEADER, proxy_header_list});
  return o;
}

// T1: the peer and its name always verified; the trust anchors.
OptionTable trust_options(const LegOptions& opt) {
  OptionTable o{
      {CURLOPT_SSL_VERIFYPEER, 1L},
      {CURLOPT_SSL_VERIFYHOST, 2L},
  };
  const char* cert_file = std::getenv("SSL_CERT_FILE");
  const char* cert_dir = std::getenv("SSL_CERT_DIR");
  if (opt.ca_file) {
    // T1: a CA file pins trust. Setting CAINFO alone keeps libcurl's built-in
    // CA directory (Debian's is /etc/ssl/certs), and SSL_CERT_DIR would add
    // another: the directory is cleared so the file is the only anchor.
    o.push_back({CURLOPT_CAINFO, opt.ca_file->c_str()});
    o.push_back({CURLOPT_CAPATH, kNoString});
  } else {
    if (cert_file && *cert_file) o.push_back({CURLOPT_CAINFO, cert_file});
    if (cert_dir && *cert_dir) o.push_back({CURLOPT_CAPATH, cert_dir});
  }
  // The delivery's TLS session cache (sessions only, never connections):
  // libcurl resumes a session only for the same host, port and TLS
  // settings, so the trust decided above is the one the session was
  // verified under.
  if (opt.tls_sessions) o.push_back({CURLOPT_SHARE, opt.tls_sessions->handle()});
  return o;
}

// D1: every wait bounded by the deadline (the progress callback ends the
// transfer at it); no signals, since the child may run threads.
OptionTable timing_options(const LegOptions& opt, Transfer& t) {
  return {
      {CURLOPT_NOSIGNAL, 1L},
      {CURLOPT_TIMEOUT_MS, remaining_ms(opt.deadline)},
      {CURLOPT_CONNECTTIMEOUT_MS, remaining_ms(opt.deadline)},
      {CURLOPT_NOPROGRESS, 0L},
      {CURLOPT_XFERINFOFUNCTION, &on_progress},
      {CURLOPT_XFERINFODATA, static_cast<void*>(&t)},
  };
}

// The exchange: our headers out; the answer into on_write, undecoded.
OptionTable exchange_options(Transfer& t, curl_slist* headers) {
  return {
      {CURLOPT_HTTPHEADER, headers},
      {CURLOPT_WRITEFUNCTION, DataCallback{&on_write}},
      {CURLOPT_WRITEDATA, static_cast<void*>(&t)},
      {CURLOPT_ACCEPT_ENCODING, kNoString},
      {CURLOPT_ERRORBUFFER, static_cast<void*>(t.error_text)},
  };
}

// T2: a GET, or a POST that is never replayed: a fresh connection that is
// closed afterwards, and no seek callback, so libcurl cannot rewind the
// body to send it again (a streamed body could not be rewound anyway: its
// bytes are gone from the pipe once sent). The body comes from on_read.
OptionTable method_options(const LegOptions& opt, Transfer& t) {
  if (opt.method != "POST") return {{CURLOPT_HTTPGET, 1L}};
  // -1: no Content-Length, for a body sent chunked; its end is the read
  // callback's 0, which a spooled body gives after exactly body_len bytes.
  const curl_off_t length = sent_chunked(opt) ? curl_off_t{-1} : static_cast<curl_off_t>(opt.body_len);
  OptionTable o{
      {CURLOPT_POST, 1L},
      {CURLOPT_FRESH_CONNECT, 1L},
      {CURLOPT_FORBID_REUSE, 1L},
      {CURLOPT_POSTFIELDSIZE_LARGE, OffsetValue{length}},
      {CURLOPT_READFUNCTION, DataCallback{&on_read}},
      {CURLOPT_READDATA, static_cast<void*>(&t)},
  };
  // A spool is read from the page cache in large pieces (libcurl's own
  // buffer is 64 KiB): fewer callbacks, reads and chunks.
  if (opt.body_fd >= 0) o.push_back({CURLOPT_UPLOAD_BUFFERSIZE, kSpoolReadBytes});
  return o;
}

// Stage 3: the leg's whole option table, groups in order, then the tests'
// extra option (LegOptions::test_extra_option) when there is one.
OptionTable leg_option_table(const LegOptions& opt, Transfer& t, curl_slist* headers, curl_slist* proxy_header_list) {
  OptionTable table;
  for (OptionTable group : {request_options(opt), proxy_options(opt, proxy_header_list), trust_options(opt),
                            timing_options(opt, t), exchange_options(t, headers), method_options(opt, t)}) {
    table.insert(table.end(), group.begin(), group.end());
  }
  if (opt.test_extra_option) {
    table.push_back({static_cast<CURLoption>(opt.test_extra_option->id), opt.test_extra_option->value});
  }
  return table;
}

// The answer as libcurl saw it. Errors: curl_refused (an info query).
Result<LegResult> read_answer(const Transfer& t) {
  LegResult out;
  auto status = response_code(t.curl);
  if (!status) return tl::unexpected(status.error());
  out.status = *status;
  out.bytes_sent = t.sent;
  out.bytes_received = t.received;
  auto ct = get_info<char*>(t.curl, CURLINFO_CONTENT_TYPE, "CURLINFO_CONTENT_TYPE");
  if (!ct) return tl::unexpected(ct.error());
  if (*ct) out.content_type = *ct;
  return out;
}

// A libcurl failure of the transfer as our error, or nothing when the
// status the server answered explains it better (judge_status reports it).
// libcurl's own detail (its error buffer) is preferred to its code's
// generic text ("SSL peer certificate or SSH remote key was not OK" says
// less than "unable to get local issuer certificate").
// A TLS failure names the anchor it was verified against (T1), as git's
// "CAfile: ..." does, and its advice never suggests what is already set.
std::optional<Error> transfer_error(const LegOptions& opt, const std::string& what, CURLcode rc, long status,
                                    const char* error_text) {
  const std::string detail = error_text[0] ? wire::printable(error_text) : std::string(curl_easy_strerror(rc));
  const std::string anchor = trust_anchor_words(opt.ca_file, opt.ca_source);
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_ABORTED_BY_CALLBACK:
      return Error{Errc::leg_timeout, what + ": the deadline passed (" + detail + ")"};
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
      return Error{Errc::tls_failed, what + ": the server's TLS certificate could not be verified against " + anchor +
                                         " (" + detail + "): " + trust_hint(opt.ca_file, opt.ca_source)};
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
      return Error{Errc::tls_failed, what + ": TLS failed (" + detail + "), trusting " + anchor};
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
      return Error{Errc::connect_failed, what + ": " + detail};
    case CURLE_UNSUPPORTED_PROTOCOL:
      return Error{Errc::scheme_refused, what + ": " + detail};
    default:
      if (status != 0 && status != 200) return std::nullopt;  // reported by status
      return Error{Errc::connect_failed, what + ": " + detail};
  }
}

// A non-200 body worth quoting: none for HTML (an error page, markup and
// all, says nothing a person can use on one line).
std::string quoted_body(const Transfer& t, const LegResult& out) {
  if (t.error_body.empty()) return "";
  const std::string type = wire::ascii_lower(out.content_type);
  const std::size_t start = t.error_body.find_first_not_of(" \t\r\n");
  const bool html =
      type.rfind("text/html", 0) == 0 || (start != std::string::npos && t.error_body.compare(start, 1, "<") == 0);
  return html ? "" : ": " + wire::server_text(t.error_body);
}

// T2: any status but 200 ends the leg, a redirect included (never followed).
Result<LegResult> judge_status(const LegOptions& opt, const Transfer& t, const std::string& what, LegResult out) {
  const std::string answered = what + ": the server answered " + std::to_string(out.status);
  if (out.status >= 300 && out.status < 400) {
    auto location = get_info<char*>(t.curl, CURLINFO_REDIRECT_URL, "CURLINFO_REDIRECT_URL");
    const std::string target = !location ? location.error().message : wire::printable(*location ? *location : "?");
    return fail(Errc::http_redirect, answered + " (redirect to " + target + "); redirects are never followed");
  }
  // The server's own words on a refusal (a verifier's reason: a stale
  // lease fence names both fences, L3) are quoted like any other status's.
  // T2: the unauthenticated GET's 401 is the challenge the caller answers
  // with credentials; every other 401/403 ends the leg.
  if (out.status == 401 && opt.challenge) return out;
  if (out.status == 401 || out.status == 403) return fail(Errc::http_auth, answered + quoted_body(t, out));
  if (out.status == 404) {
    return fail(Errc::http_status, "repository not found at " +
                                       wire::printable(opt.remote.empty() ? opt.url : opt.remote) + " (" + answered +
                                       ")");
  }
  if (out.status != 200) return fail(Errc::http_status, answered + quoted_body(t, out));
  return out;
}

// T1: the proxy's answer to CONNECT, when it was not 200: the tunnel was
// never opened, so nothing reached the origin. Errors: proxy_failed,
// curl_refused (the info query).
Result<void> tunnel_refused(const LegOptions& opt, const Transfer& t, const std::string& what) {
  if (!opt.proxy) return {};
  auto code = get_info<long>(t.curl, CURLINFO_HTTP_CONNECTCODE, "CURLINFO_HTTP_CONNECTCODE");
  if (!code) return tl::unexpected(code.error());
  if (*code == 0 || *code == 200) return {};
  // A proxy that asks for credentials with 401 instead of 407 (tinyproxy
  // does) means the same, and gets the same advice.
  if (*code == 407 || *code == 401) {
    const std::string said = *code == 407 ? "407 (proxy authentication required)" : "401 (authentication required)";
    return fail(
        Errc::proxy_failed,
        what + ": the proxy answered " + said + " to CONNECT: " +
            (opt.proxy_authorization ? "it refused the credentials in the proxy URL (sent as Basic)"
                                     : "give its credentials in the proxy URL (http://USER:PASSWORD@HOST:PORT)"));
  }
  return fail(Errc::proxy_failed, what + ": the proxy answered " + std::to_string(*code) + " to CONNECT");
}

// Stage 5: the leg's result. Our own stops first (the sender's abort, a sink
// that refused the body), then libcurl's code, then the status.
Result<LegResult> judge_leg(const LegOptions& opt, const Transfer& t, CURLcode rc) {
  if (t.aborted_by_sender) {
    return fail(Errc::leg_aborted, sys::mono_now_ns() >= opt.deadline ? "upload stopped: the deadline passed"
                                                                      : "upload stopped: authority withdrawn");
  }
  if (t.sink_error) return tl::unexpected(*t.sink_error);
  auto out = read_answer(t);
  if (!out) return out;
  const std::string what = opt.method + " " + wire::printable(opt.url) +
                           (opt.proxy ? " through the proxy " + wire::printable(*opt.proxy) : "");
  if (rc != CURLE_OK) {
    if (auto refused = tunnel_refused(opt, t, what); !refused) return tl::unexpected(refused.error());
    if (auto e = transfer_error(opt, what, rc, out->status, t.error_text)) return tl::unexpected(*e);
  }
  return judge_status(opt, t, what, std::move(*out));
}

}  // namespace

void init_transport() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

Result<void> check_remote_scheme(std::string_view url, bool allow_http_loopback) {
  // The wire leaf's parser and scheme rule: one reading of the URL for the
  // minter, the lane and this leg.
  auto parsed = wire::parse_url(url, "remote URL");
  if (!parsed) return fail(Errc::scheme_refused, parsed.error().message);
  return wire::check_scheme(*parsed, allow_http_loopback);
}

Result<LegResult> perform_leg(const LegOptions& opt) {
  init_transport();
  if (auto ok = check_before_io(opt); !ok) return tl::unexpected(ok.error());
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return fail(Errc::connect_failed, "curl_easy_init failed");
  Transfer t;
  t.opt = &opt;
  t.curl = curl.get();
  auto headers = leg_headers(opt);
  if (!headers) return tl::unexpected(headers.error());
  auto to_proxy = proxy_headers(opt);
  if (!to_proxy) return tl::unexpected(to_proxy.error());
  // Every option, or no request at all.
  if (auto ok = set_options(curl.get(), leg_option_table(opt, t, headers->get(), to_proxy->get())); !ok) {
    return tl::unexpected(ok.error());
  }
  const CURLcode rc = curl_easy_perform(curl.get());
  return judge_leg(opt, t, rc);
}

}  // namespace courier::transport
