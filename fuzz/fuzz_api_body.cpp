// fuzz_api_body.cpp — libFuzzer target: arbitrary bytes as the body of
// POST /v1/deliveries, read as the service reads it (service/submit_body.*:
// the bounded JSON reader, then every field), with a repository that always
// exists under the root and objects that always resolve. Oracles: nothing
// crashes or throws; an accepted submission names a canonical remote that
// parses again to itself, a ref and an oid of the right shape, a deadline of
// at most 24 h, and a credential the service has.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "service/submit_body.hpp"
#include "transport/oid.hpp"
#include "transport/refname.hpp"
#include "wire/grammar.hpp"
#include "wire/remote.hpp"

using namespace courier;

namespace {

service::RepositoryChecks checks() {
  service::RepositoryChecks c;
  c.locate = [](const std::string& repo) -> tl::expected<std::string, service::Refusal> { return repo; };
  c.gated_object = [](const std::string&, const std::string&) -> Result<void> { return {}; };
  c.resolve_revision = [](const std::string&, const std::string&) -> Result<std::string> {
    return std::string(40, 'c');
  };
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const service::RepositoryChecks kChecks = checks();
  static const service::ApiConfig kConfig{"/srv", {{"deploy", {"credential", {"https://h/"}}}}, true};
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto in = service::read_submission(body, kConfig, kChecks);
  if (!in) {
    if (in.error().empty()) std::abort();
    for (const auto& r : in.error()) {
      if (r.code.empty() || r.status < 400) std::abort();
    }
    return 0;
  }
  const std::string& canonical = in->checked.remote();
  auto again = wire::parse_remote(canonical);
  if (!again || again->canonical != canonical) std::abort();
  const DeliveryRequest& req = in->checked.request();
  if (!transport::is_valid_push_refname(req.ref) || !transport::is_valid_oid(req.oid)) std::abort();
  if (in->deadline > wire::kMaxDeadline) std::abort();
  if (!in->credential.empty() && in->credential != "deploy") std::abort();
  return 0;
}
