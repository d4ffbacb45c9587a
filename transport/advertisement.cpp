// advertisement.cpp — strict parsing of the receive-pack ref advertisement.
#include "transport/advertisement.hpp"

#include <optional>

#include "transport/media_type.hpp"
#include "transport/oid.hpp"
#include "transport/pktline.hpp"
#include "wire/text.hpp"

namespace courier::transport {
namespace {

constexpr std::string_view kCapabilitiesPlaceholder = "capabilities^{}";
constexpr std::string_view kHaveName = ".have";
constexpr std::string_view kDefaultObjectFormat = "sha1";

tl::unexpected<Error> malformed(const std::string& why) {
  return fail(Errc::advertisement_malformed, "ref advertisement: " + why);
}

// A ref name as the server spells it: we only look names up, but a name
// with blanks or control bytes means we are not reading what we think.
bool plausible_refname(std::string_view name) {
  if (name.empty()) return false;
  for (char ch : name) {
    const auto b = static_cast<unsigned char>(ch);
    if (b <= 0x20 || b == 0x7F) return false;
  }
  return true;
}

class Parser {
 public:
  explicit Parser(std::string_view body) { decoder_.feed(body); }

  // The next packet; running out of input is an error naming what was due.
  Result<Pkt> take(const char* expected) {
    auto next = decoder_.next();
    if (!next) return context(next.error());
    if (*next) return std::move(**next);
    auto end = decoder_.finish();
    if (!end) return context(end.error());
    return malformed(std::string("body ends before ") + expected);
  }

  bool at_end() const { return decoder_.buffered() == 0; }

 private:
  static tl::unexpected<Error> context(Error e) {
    e.message = "ref advertisement: " + e.message;
    return tl::unexpected<Error>(std::move(e));
  }
  PktDecoder decoder_;
};

// An `ERR <message>` packet is how git servers refuse a request in-band.
std::optional<Error> err_packet(const Pkt& pkt) {
  constexpr std::string_view kErr = "ERR ";
  if (pkt.kind != PktKind::data || pkt.payload.compare(0, kErr.size(), kErr) != 0) return std::nullopt;
  return Error{Errc::remote_error,
               "remote error: " + wire::server_text(std::string_view(pkt.payload).substr(kErr.size()))};
}

Result<void> check_object_format(const Capabilities& caps) {
  const auto format = caps.value("object-format");
  if (!format || *format == kDefaultObjectFormat) return {};
  return fail(Errc::unsupported_object_format,
              "unsupported object format: the remote repository uses object-format=" + wire::printable(*format) +
                  "; git-courier supports sha1 repositories only");
}

}  // namespace

std::string_view Advertisement::oid_of(std::string_view ref) const {
  const auto it = refs.find(ref);
  return it == refs.end() ? kZeroOid : std::string_view(it->second);
}

namespace {

// Smart HTTP's service header: pkt("# service=git-receive-pack\n") flush.
Result<void> take_service_header(Parser& in) {
  auto service = in.take("the service line");
  if (!service) return tl::unexpected<Error>(service.error());
  if (auto err = err_packet(*service)) return tl::unexpected<Error>(*err);
  const std::string expected_service = "# service=" + std::string(kReceivePackService);
  if (service->kind != PktKind::data || wire::chomp(service->payload) != expected_service) {
    return malformed("first packet is not \"" + expected_service + "\" but \"" + wire::printable(service->payload) +
                     "\"");
  }
  auto flush = in.take("the flush after the service line");
  if (!flush) return tl::unexpected<Error>(flush.error());
  if (flush->kind != PktKind::flush) return malformed("no flush after the service line");
  return {};
}

}  // namespace

Result<Advertisement> parse_advertisement(std::string_view body, AdvertisementForm form) {
  Parser in(body);
  if (form == AdvertisementForm::http) {
    if (auto ok = take_service_header(in); !ok) return tl::unexpected<Error>(ok.error());
  }

  Advertisement adv;
  bool first = true;
  bool placeholder = false;
  for (;;) {
    auto pkt = in.take("the final flush");
    if (!pkt) return tl::unexpected<Error>(pkt.error());
    if (pkt->kind == PktKind::flush) break;
    if (pkt->kind != PktKind::data) return malformed("unexpected delim or response-end packet");
    if (auto err = err_packet(*pkt)) return tl::unexpected<Error>(*err);

    std::string_view line = wire::chomp(pkt->payload);
    const std::size_t nul = line.find('\0');
    if (nul != std::string_view::npos) {
      if (!first) return malformed("capabilities after the first line: \"" + wire::printable(line) + "\"");
      adv.capabilities = parse_capabilities(line.substr(nul + 1));
      line = line.substr(0, nul);
      // Before looking at the id: a sha256 server's ids are 64 digits long,
      // and "unsupported object format" is the truthful answer, not "bad id".
      auto format = check_object_format(adv.capabilities);
      if (!format) return tl::unexpected<Error>(format.error());
    }
    if (placeholder) return malformed("a ref line follows " + std::string(kCapabilitiesPlaceholder));

    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos)
      return malformed("ref line without a space: \"" + wire::printable(line) + "\"");
    const std::string_view oid = line.substr(0, space);
    const std::string_view name = line.substr(space + 1);
    if (!is_valid_oid(oid)) return malformed("not a 40-hex object id: \"" + wire::printable(oid) + "\"");

    if (name == kCapabilitiesPlaceholder) {
      if (!first || !is_zero_oid(oid)) {
        return malformed(std::string(kCapabilitiesPlaceholder) + " is only valid as the first line, with the zero id");
      }
      placeholder = true;
    } else if (is_zero_oid(oid)) {
      return malformed("ref \"" + wire::printable(name) + "\" advertised with the zero id");
    } else if (name == kHaveName) {
      adv.haves.emplace_back(oid);
    } else {
      if (!plausible_refname(name)) return malformed("invalid ref name \"" + wire::printable(name) + "\"");
      if (!adv.refs.emplace(name, oid).second)
        return malformed("ref \"" + wire::printable(name) + "\" advertised twice");
    }
    first = false;
  }
  if (!in.at_end()) return malformed("bytes after the final flush");
  return adv;
}

Result<void> check_advertisement_content_type(std::string_view content_type) {
  return expect_media_type(content_type, kAdvertisementContentType, "the ref advertisement");
}

}  // namespace courier::transport
