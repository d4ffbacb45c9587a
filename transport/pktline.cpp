// pktline.cpp — pkt-line encoding and incremental decoding.
#include "transport/pktline.hpp"

#include "wire/hex.hpp"
#include "wire/text.hpp"

namespace courier::transport {
namespace {

constexpr std::size_t kMinDataPkt = kPktHeader;  // 0004: a data packet with no payload

// The packet length from its 4 header bytes: 0-2 for control packets, or
// 4..kMaxPkt for data. Everything else is refused before any payload is read.
Result<std::size_t> parse_length(std::string_view header) {
  // git reads lengths with its general hex parser, which takes both cases.
  const auto bytes = wire::from_hex(header, wire::HexCase::any);
  if (!bytes || bytes->size() != 2) {
    return fail(Errc::pkt_invalid_length, "pkt-line length is not 4 hex digits: \"" + wire::printable(header) + "\"");
  }
  const std::size_t n =
      static_cast<std::size_t>(static_cast<unsigned char>((*bytes)[0])) << 8 | static_cast<unsigned char>((*bytes)[1]);
  if (n == 3) return fail(Errc::pkt_invalid_length, "pkt-line length 0003 is invalid");
  if (n > kMaxPkt) {
    return fail(Errc::pkt_too_large,
                "pkt-line length " + std::to_string(n) + " exceeds the maximum of " + std::to_string(kMaxPkt));
  }
  return n;
}

}  // namespace

Result<std::string> encode_pkt(std::string_view payload) {
  if (payload.size() > kMaxPktPayload) {
    return fail(Errc::pkt_too_large, "pkt-line payload of " + std::to_string(payload.size()) +
                                         " bytes exceeds the maximum of " + std::to_string(kMaxPktPayload));
  }
  const std::size_t n = payload.size() + kPktHeader;
  std::string out = wire::to_hex(n, kPktHeader);
  out.reserve(n);
  out.append(payload);
  return out;
}

void PktDecoder::feed(std::string_view bytes) {
  // Drop what was already returned before growing, so the buffer holds at
  // most one partial packet plus the newest feed.
  if (pos_ > 0 && (pos_ == buf_.size() || pos_ >= kMaxPkt)) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  buf_.append(bytes);
}

Result<std::optional<Pkt>> PktDecoder::next() {
  if (failed_) return tl::unexpected<Error>(*failed_);
  if (buffered() < kPktHeader) return std::optional<Pkt>{};
  auto n = parse_length(std::string_view(buf_.data() + pos_, kPktHeader));
  if (!n) {
    failed_ = n.error();
    return tl::unexpected<Error>(*failed_);
  }
  Pkt pkt;
  if (*n < kMinDataPkt) {
    pkt.kind = *n == 0 ? PktKind::flush : *n == 1 ? PktKind::delim : PktKind::response_end;
    pos_ += kPktHeader;
    return std::optional<Pkt>{std::move(pkt)};
  }
  if (buffered() < *n) return std::optional<Pkt>{};
  pkt.payload.assign(buf_, pos_ + kPktHeader, *n - kPktHeader);
  pos_ += *n;
  return std::optional<Pkt>{std::move(pkt)};
}

Result<void> PktDecoder::finish() const {
  if (failed_) return tl::unexpected<Error>(*failed_);
  const std::size_t left = buffered();
  if (left == 0) return {};
  if (left < kPktHeader) {
    return fail(Errc::pkt_truncated, "input ends inside a pkt-line length (" + std::to_string(left) + " of 4 bytes)");
  }
  auto n = parse_length(std::string_view(buf_.data() + pos_, kPktHeader));
  if (!n) return tl::unexpected<Error>(n.error());
  if (*n <= left) return fail(Errc::invalid_argument, "pkt-line decoder finished with unread packets");
  return fail(Errc::pkt_truncated,
              "input ends inside a pkt-line (" + std::to_string(left) + " of " + std::to_string(*n) + " bytes)");
}

}  // namespace courier::transport
