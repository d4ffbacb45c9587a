// read_back.cpp — the read-back GET: one advertisement, one ref.
#include "transport/read_back.hpp"

#include "transport/advertisement.hpp"
#include "transport/http_leg.hpp"
#include "wire/legs.hpp"

namespace courier::transport {

Result<std::string> read_ref(const ReadRefOptions& o) {
  LegOptions get;
  get.method = "GET";
  get.url = wire::leg_url(o.remote, wire::Leg::advertisement);
  get.authorization = o.authorization;
  get.ca_file = o.ca_file;
  get.proxy = o.proxy;
  get.proxy_authorization = o.proxy_authorization;
  get.allow_http_loopback = o.allow_http_loopback;
  get.deadline = o.deadline;
  get.accept = std::string(kAdvertisementContentType);
  std::string body;
  get.on_body = [&](std::string_view chunk) -> Result<void> {
    body.append(chunk);
    return {};
  };
  auto leg = perform_leg(get);
  if (!leg) return tl::unexpected(leg.error());
  if (auto ok = check_advertisement_content_type(leg->content_type); !ok) return tl::unexpected(ok.error());
  auto adv = parse_advertisement(body);
  if (!adv) return tl::unexpected(adv.error());
  return std::string(adv->oid_of(o.ref));
}

}  // namespace courier::transport
