// push_http.cpp — a delivery's legs over smart HTTP (push_leg.hpp): the
// advertisement GET and the receive-pack POST, each with its own token
// and authority check (T1–T3).
#include <optional>

#include "child/push_leg.hpp"
#include "transport/http_leg.hpp"
#include "transport/report.hpp"
#include "transport/tls_sessions.hpp"
#include "wire/legs.hpp"

namespace courier::child {

namespace {

// The status a failed leg reports: 401/403 is an auth failure; everything
// else on the wire is a transport failure.
wire::DeliveryStatus status_for(const Error& e) {
  return e.code == Errc::http_auth ? wire::DeliveryStatus::auth_failed : wire::DeliveryStatus::transport_failed;
}

class HttpLeg final : public PushLeg {
 public:
  HttpLeg(const protocol::Job& job, Channel& ch) : job_(job), ch_(ch) {}

  transport::AdvertisementForm form() const override { return transport::AdvertisementForm::http; }

  // A token for the GET, authority asked, the advertisement fetched and
  // its content type checked. With challenge_first (git's credential
  // helpers, T2) the GET goes first without credentials: a 200 is the
  // advertisement and the delivery asks for no token at all; a 401 asks
  // for the GET's token and sends the GET once more, the one authenticated
  // GET. Ends with auth_failed, failed (authority) or transport_failed.
  LegStep<std::string> advertise() override {
    const std::string adv_url = wire::leg_url(job_.remote, wire::Leg::advertisement);
    std::string body;
    std::optional<transport::LegResult> leg;
    if (job_.challenge_first) {
      auto open = get_advertisement(adv_url, std::nullopt, true, body);
      if (!open) return tl::unexpected(open.error());
      if (open->status == 200) {
        anonymous_ = true;
        leg = *open;
      }
    }
    if (!leg) {
      auto auth = token(std::string(protocol::kLegAdvertisement), "GET", adv_url, std::nullopt, std::nullopt);
      if (!auth) return leg_stop(wire::DeliveryStatus::auth_failed, auth.error().message);
      auto got = get_advertisement(adv_url, *auth, false, body);
      if (!got) return tl::unexpected(got.error());
      leg = *got;
    }
    if (auto ok = transport::check_advertisement_content_type(leg->content_type); !ok) {
      return leg_stop(wire::DeliveryStatus::transport_failed, ok.error().message);
    }
    return body;
  }

  // A token bound to the body's digest and length (a streamed body's binds
  // neither: the job says the minter does not ask for them), the POST gate,
  // then the POST sent once (T2) and its answer read.
  LegStep<std::uint64_t> upload(UploadIo& io) override {
    const PostBody& body = io.body;
    const std::string post_url = wire::leg_url(job_.remote, wire::Leg::receive_pack);
    auto post_auth =
        body.source ? token(std::string(protocol::kLegReceivePack), "POST", post_url, std::nullopt, std::nullopt)
                    : token(std::string(protocol::kLegReceivePack), "POST", post_url, body.body_sha256, body.body_len);
    if (!post_auth) return leg_stop(wire::DeliveryStatus::auth_failed, post_auth.error().message);
    auto granted = io.post_gate();
    if (!granted) return tl::unexpected(granted.error());
    transport::LegOptions post = leg_options("POST", post_url, *post_auth, transport::kResultContentType);
    post.proxy_authorization = *granted;
    post.content_type = std::string(wire::leg_spec(wire::Leg::receive_pack).request_type);
    post.body_prefix = body.request.body_prefix;
    if (body.source) {
      post.body_source = body.source;
    } else {
      post.body_fd = body.fd.get();
      post.body_len = body.body_len;
    }
    post.on_upload = io.on_upload;
    post.on_body = io.on_response;
    auto up = transport::perform_leg(post);
    if (!up && anonymous_ && up.error().code == Errc::http_auth) {
      // T2: the POST is sent once (git would ask its helper and resend it).
      return leg_stop(wire::DeliveryStatus::auth_failed,
                      up.error().message +
                          " (the advertisement was served without credentials, so none were sent; the push is never "
                          "sent twice: make the server ask for them on the advertisement too)");
    }
    if (!up) return leg_stop(status_for(up.error()), up.error().message);
    if (auto ok = transport::check_result_content_type(up->content_type); !ok) {
      return leg_stop(wire::DeliveryStatus::transport_failed, ok.error().message);
    }
    return up->bytes_sent;
  }

 private:
  // One advertisement GET: authority asked, sent with `auth` (none: without
  // credentials), its body into `body`. With `challenge` a 401 comes back
  // as a result. Ends with auth_failed, failed (authority) or transport_failed.
  LegStep<transport::LegResult> get_advertisement(const std::string& adv_url, const std::optional<std::string>& auth,
                                                  bool challenge, std::string& body) {
    auto granted = ch_.check("advertisement");
    if (!granted) return leg_stop(wire::DeliveryStatus::failed, granted.error().message);
    transport::LegOptions get = leg_options("GET", adv_url, auth, transport::kAdvertisementContentType);
    get.proxy_authorization = *granted;
    get.challenge = challenge;
    get.on_body = [&](std::string_view chunk) -> Result<void> {
      body.append(chunk);
      return {};
    };
    auto leg = transport::perform_leg(get);
    if (!leg) return leg_stop(status_for(leg.error()), leg.error().message);
    return *leg;
  }

  // What both legs share: the job's trust, proxy, loopback permission and
  // deadline.
  transport::LegOptions leg_options(const char* method, const std::string& url,
                                    const std::optional<std::string>& authorization, std::string_view accept) const {
    transport::LegOptions o;
    o.method = method;
    o.url = url;
    o.remote = job_.remote;
    o.authorization = authorization;
    o.ca_file = job_.ca_file;
    o.ca_source = job_.ca_source;
    if (tls_sessions_) o.tls_sessions = &*tls_sessions_;
    o.proxy = job_.proxy;  // its credentials come with each leg's grant
    o.allow_http_loopback = job_.allow_http_loopback;
    o.deadline = job_.deadline_mono_ns;
    o.accept = std::string(accept);
    return o;
  }

  Result<std::optional<std::string>> token(const std::string& leg, const std::string& method, const std::string& url,
                                           std::optional<std::string> sha, std::optional<std::uint64_t> len) {
    // An advertisement that came without credentials (anonymous_): the POST
    // goes without them too, and a 401 to it ends the delivery (T2: never
    // replayed).
    if (!job_.authenticated || anonymous_) return std::optional<std::string>{};
    protocol::Mint m{leg, method, url, std::move(sha), len};
    auto header = ch_.mint(m);
    if (!header) return tl::unexpected(header.error());
    return std::optional<std::string>{*header};
  }

  // The legs' shared TLS session cache: the POST resumes the GET's session
  // on a fresh connection. Without one (libcurl refused it) each leg makes
  // a full handshake, as before.
  static std::optional<transport::TlsSessions> shared_tls_sessions() {
    auto made = transport::TlsSessions::make();
    if (!made) return std::nullopt;
    return std::optional<transport::TlsSessions>(std::move(*made));
  }

  const protocol::Job& job_;
  Channel& ch_;
  // The remote answered the unauthenticated advertisement GET (challenge
  // first): no leg of this delivery asks for a token.
  bool anonymous_ = false;
  std::optional<transport::TlsSessions> tls_sessions_ = shared_tls_sessions();
};

}  // namespace

std::unique_ptr<PushLeg> make_http_leg(const protocol::Job& job, Channel& ch) {
  return std::make_unique<HttpLeg>(job, ch);
}

}  // namespace courier::child
