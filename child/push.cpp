// push.cpp — the child's delivery: legs, pack, report.
#include "child/push.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "child/pack.hpp"
#include "sys/clock.hpp"
#include "sys/io.hpp"
#include "transport/advertisement.hpp"
#include "transport/http_leg.hpp"
#include "transport/oid.hpp"
#include "transport/report.hpp"
#include "transport/request.hpp"
#include "wire/text.hpp"

namespace courier::child {

namespace {

struct DigestDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

std::string hex(const unsigned char* p, std::size_t n) {
  static const char* const digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(digits[p[i] >> 4]);
    out.push_back(digits[p[i] & 0xF]);
  }
  return out;
}

std::uint64_t ms_since(sys::MonoNs t) { return static_cast<std::uint64_t>((sys::mono_now_ns() - t) / sys::kNsPerMs); }

// The status a failed leg reports: 401/403 is an auth failure; everything
// else on the wire is a transport failure.
const char* status_for(const Error& e) { return e.code == Errc::http_auth ? "auth_failed" : "transport_failed"; }

class Push {
 public:
  Push(const protocol::Job& job, Channel& ch) : job_(job), ch_(ch) {
    // Every result names the job's ref and object, whatever its status: the
    // parent takes no result for anything else (P1).
    result_.ref = job.ref;
    result_.oid = job.oid;
    result_.status = "failed";
    base_ = job.remote;
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
  }

  protocol::ResultMsg run() {
    if (auto ok = check_gated_object(job_.repo, job_.oid); !ok) return failed("failed", ok.error().message);
    if (auto ok = transport::check_remote_scheme(job_.remote, job_.allow_http_loopback); !ok) {
      return failed("transport_failed", ok.error().message);
    }
    // ---- leg 1: the advertisement ----
    const sys::MonoNs t_adv = sys::mono_now_ns();
    progress("advertise", 0, 1);
    const std::string adv_url = base_ + "/info/refs?service=git-receive-pack";
    auto auth = token(std::string(protocol::kLegAdvertisement), "GET", adv_url, std::nullopt, std::nullopt);
    if (!auth) return failed("auth_failed", auth.error().message);
    if (auto ok = ch_.check("advertisement"); !ok) return failed("failed", ok.error().message);
    std::string body;
    transport::LegOptions get = leg_options("GET", adv_url, *auth, transport::kAdvertisementContentType);
    get.on_body = [&](std::string_view chunk) -> Result<void> {
      body.append(chunk);
      return {};
    };
    auto leg = transport::perform_leg(get);
    if (!leg) return failed(status_for(leg.error()), leg.error().message);
    if (auto ok = transport::check_advertisement_content_type(leg->content_type); !ok) {
      return failed("transport_failed", ok.error().message);
    }
    auto adv = transport::parse_advertisement(body);
    if (!adv) return failed("transport_failed", adv.error().message);
    progress("advertise", 1, 1);
    result_.advertise_ms = ms_since(t_adv);
    const std::string old_oid(adv->oid_of(job_.ref));
    result_.old_oid = old_oid;
    if (old_oid == job_.oid) {
      result_.status = "up_to_date";
      result_.oid = job_.oid;
      result_.objects = 0;
      result_.bytes_sent = 0;
      return result_;
    }
    if (job_.expect_old && *job_.expect_old != old_oid) {
      result_.status = "rejected";
      result_.reason = "expect_old mismatch: the remote has " + old_oid + ", expected " + *job_.expect_old;
      return result_;
    }

    // ---- the pack, spooled in the scratch directory (never the repository) ----
    const sys::MonoNs t_pack = sys::mono_now_ns();
    auto request = transport::build_push_request(*adv, job_.ref, job_.oid);
    if (!request) return failed("transport_failed", request.error().message);
    const std::string spool = job_.scratch_dir + "/pack-" + std::to_string(::getpid()) + ".pack";
    sys::ScopedFd fd(::open(spool.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!fd) return failed("failed", "cannot create the pack spool in " + job_.scratch_dir);
    std::unique_ptr<EVP_MD_CTX, DigestDeleter> digest(EVP_MD_CTX_new());
    EVP_DigestInit_ex(digest.get(), EVP_sha256(), nullptr);
    EVP_DigestUpdate(digest.get(), request->body_prefix.data(), request->body_prefix.size());
    PackSpec spec;
    spec.repo = job_.repo;
    spec.oid = job_.oid;
    for (const auto& [ref, id] : adv->refs) {
      if (!transport::is_zero_oid(id)) spec.hide.push_back(id);
    }
    spec.hide.insert(spec.hide.end(), adv->haves.begin(), adv->haves.end());
    spec.deadline = job_.deadline_mono_ns;
    spec.sink = [&](const void* data, std::size_t n) -> Result<void> {
      EVP_DigestUpdate(digest.get(), data, n);
      return sys::write_all(fd.get(), static_cast<const char*>(data), n);
    };
    spec.progress = [&](std::uint64_t done, std::uint64_t total) { progress("pack", done, total, true); };
    auto pack = job_.pack_git ? build_pack_with_git(spec, *job_.pack_git, job_.scratch_dir) : build_pack(spec);
    // Building the pack is local work (the repository, the pack engine, the
    // spool): its failures are `failed`, never blamed on the transport.
    if (!pack) return failed("failed", pack.error().message);
    unsigned char sum[EVP_MAX_MD_SIZE];
    unsigned int sum_len = 0;
    EVP_DigestFinal_ex(digest.get(), sum, &sum_len);
    const std::string body_sha256 = hex(sum, sum_len);
    const std::uint64_t body_len = request->body_prefix.size() + pack->bytes;
    result_.objects = pack->objects;
    result_.pack_ms = ms_since(t_pack);
    progress("pack", pack->objects, pack->objects);

    // ---- leg 2: the receive-pack POST, sent at most once ----
    const sys::MonoNs t_up = sys::mono_now_ns();
    const std::string post_url = base_ + "/git-receive-pack";
    auto post_auth = token(std::string(protocol::kLegReceivePack), "POST", post_url, body_sha256, body_len);
    if (!post_auth) return failed("auth_failed", post_auth.error().message);
    if (auto ok = ch_.check("upload"); !ok) return failed("failed", ok.error().message);
    bool authority = true;  // granted just now; any later refusal ends us by a kill
    transport::ReportReader reader(request->side_band);
    transport::LegOptions post = leg_options("POST", post_url, *post_auth, transport::kResultContentType);
    post.content_type = std::string(transport::kReceivePackRequestType);
    post.body_prefix = request->body_prefix;
    post.body_fd = fd.get();
    post.body_len = body_len;
    post.may_send = [&]() { return authority; };
    // Recorded as it happens, not from the leg's result: a leg that fails
    // after the body left (a 500, a truncated report) returns no result, and
    // its outcome must still say how many bytes were sent.
    result_.bytes_sent = 0;
    post.on_upload = [&](std::uint64_t sent, std::uint64_t total) {
      result_.bytes_sent = sent;
      progress("upload", sent, total, sent < total);
    };
    post.on_body = [&](std::string_view chunk) -> Result<void> {
      auto lines = reader.feed(chunk);
      if (!lines) return tl::unexpected(lines.error());
      for (const auto& l : *lines) progress_text("remote", wire::printable(l));
      return {};
    };
    auto up = transport::perform_leg(post);
    result_.upload_ms = ms_since(t_up);
    if (!up) return failed(status_for(up.error()), up.error().message);
    result_.bytes_sent = up->bytes_sent;
    if (auto ok = transport::check_result_content_type(up->content_type); !ok) {
      return failed("transport_failed", ok.error().message);
    }
    auto report = reader.finish();
    if (!report) return failed("transport_failed", report.error().message);
    auto verdict = transport::judge_report(*report, job_.ref);
    if (!verdict) return failed("transport_failed", verdict.error().message);
    if (verdict->status == transport::PushStatus::delivered) {
      result_.status = "delivered";
      result_.oid = job_.oid;
      return result_;
    }
    result_.status = "rejected";
    result_.reason = verdict->reason;
    return result_;
  }

 private:
  // What both legs share: the job's trust, loopback permission and deadline.
  transport::LegOptions leg_options(const char* method, const std::string& url, const std::optional<std::string>& authorization,
                            std::string_view accept) const {
    transport::LegOptions o;
    o.method = method;
    o.url = url;
    o.authorization = authorization;
    o.ca_file = job_.ca_file;
    o.allow_http_loopback = job_.allow_http_loopback;
    o.deadline = job_.deadline_mono_ns;
    o.accept = std::string(accept);
    return o;
  }

  protocol::ResultMsg failed(const std::string& status, const std::string& reason) {
    result_.status = status;
    result_.reason = reason;
    return result_;
  }

  Result<std::optional<std::string>> token(const std::string& leg, const std::string& method, const std::string& url,
                                           std::optional<std::string> sha, std::optional<std::uint64_t> len) {
    if (!job_.authenticated) return std::optional<std::string>{};
    protocol::Mint m{leg, method, url, std::move(sha), len};
    auto header = ch_.mint(m);
    if (!header) return tl::unexpected(header.error());
    return std::optional<std::string>{*header};
  }

  void progress(const std::string& phase, std::uint64_t done, std::uint64_t total, bool throttle = false) {
    const sys::MonoNs now = sys::mono_now_ns();
    if (throttle && now - last_progress_ < 100 * sys::kNsPerMs) return;
    last_progress_ = now;
    (void)ch_.send(protocol::Progress{phase, done, total, std::nullopt});
  }

  void progress_text(const std::string& phase, const std::string& text) {
    (void)ch_.send(protocol::Progress{phase, 0, 0, text});
  }

  const protocol::Job& job_;
  Channel& ch_;
  std::string base_;
  protocol::ResultMsg result_;
  sys::MonoNs last_progress_ = 0;
};

}  // namespace

protocol::ResultMsg run_push(const protocol::Job& job, Channel& channel) { return Push(job, channel).run(); }

}  // namespace courier::child
