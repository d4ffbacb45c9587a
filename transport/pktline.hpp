// pktline.hpp — the pkt-line codec of git's smart protocols.
//
// A pkt-line is 4 hex digits giving the length of the whole packet
// (including those 4 bytes) followed by the payload. Three lengths are
// control packets with no payload: 0000 flush, 0001 delim, 0002
// response-end. 0003 is never valid, and no packet exceeds 65520 bytes
// (git's LARGE_PACKET_MAX), which bounds what a decoder ever buffers for one
// packet. The decoder tells "the input ended between packets" (clean) apart
// from "the input ended inside a packet" (truncated): over HTTP the status
// line is 200 before the server has done anything, so a cut body is the only
// sign that the server died, and it must never look like a clean end.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "courier/result.hpp"

namespace courier::transport {

inline constexpr std::size_t kPktHeader = 4;
inline constexpr std::size_t kMaxPkt = 65520;
inline constexpr std::size_t kMaxPktPayload = kMaxPkt - kPktHeader;
inline constexpr std::string_view kFlushPkt = "0000";
inline constexpr std::string_view kDelimPkt = "0001";
inline constexpr std::string_view kResponseEndPkt = "0002";

enum class PktKind { data, flush, delim, response_end };

struct Pkt {
  PktKind kind = PktKind::data;
  std::string payload;  // empty for control packets (and for the 0004 keepalive)
  bool operator==(const Pkt&) const = default;
};

// Header + payload. Errors: pkt_too_large (payload over kMaxPktPayload);
// nothing is produced in that case.
Result<std::string> encode_pkt(std::string_view payload);

// Incremental decoder. Feed it bytes as they arrive, take packets until it
// says it needs more, and call finish() at the end of the input.
class PktDecoder {
 public:
  // Appends bytes. Never fails; errors surface from next().
  void feed(std::string_view bytes);

  // The next packet, std::nullopt when more bytes are needed. Errors:
  // pkt_invalid_length (a non-hex length, or 0003), pkt_too_large (a length
  // over kMaxPkt, refused from the header alone). After an error the
  // decoder stays failed.
  Result<std::optional<Pkt>> next();

  // At end of input, after next() said it needs more: ok when the input
  // fell on a packet boundary; pkt_truncated when a packet was cut (in its
  // header or its payload); or the error next() already reported.
  Result<void> finish() const;

  // Bytes fed and not yet returned as packets.
  std::size_t buffered() const { return buf_.size() - pos_; }

 private:
  std::string buf_;
  std::size_t pos_ = 0;
  std::optional<Error> failed_;
};

}  // namespace courier::transport
