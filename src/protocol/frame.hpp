// frame.hpp — the length-prefixed frame codec (rule P1).
//
// A frame is a 4-byte big-endian unsigned length n followed by n bytes of
// UTF-8 JSON. kMaxFrame is enforced by the writer (no frame over the cap is
// ever produced, not even partially) and by the reader (a length over the cap
// is refused from the 4 header bytes alone, before anything is allocated).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "courier/result.hpp"

namespace courier::protocol {

inline constexpr std::size_t kMaxFrame = 1024 * 1024;
inline constexpr std::size_t kFrameHeader = 4;

// Builds header + body. Errors: frame_empty, frame_too_large, invalid_utf8.
Result<std::string> encode_frame(std::string_view body);

// True when `s` is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool is_valid_utf8(std::string_view s);

// Incremental reader over a byte stream. Feed it what read(2) returned, then
// take frames until it says it needs more. It holds at most one partial frame,
// so its memory is bounded by kMaxFrame + kFrameHeader + one feed.
class FrameDecoder {
 public:
  // Appends bytes. Never fails; errors surface from next().
  void feed(const char* data, std::size_t len);

  // The next complete frame body, std::nullopt when more bytes are needed.
  // Errors: frame_too_large (from the header alone), frame_empty,
  // invalid_utf8. After an error the decoder stays failed.
  Result<std::optional<std::string>> next();

  // Call at end-of-file. Ok when EOF fell on a frame boundary; otherwise
  // frame_truncated_length (1-3 header bytes) or frame_truncated_body.
  Result<void> finish() const;

  // Bytes buffered and not yet returned as a frame.
  std::size_t buffered() const { return buf_.size() - pos_; }

 private:
  std::string buf_;
  std::size_t pos_ = 0;
  std::optional<Error> failed_;
};

// Blocking helpers for the child side (fd in blocking mode).
// read_frame: ok(nullopt) on clean EOF at a frame boundary.
// Errors: as FrameDecoder, plus os_error.
Result<std::optional<std::string>> read_frame(int fd);
// The same over any blocking byte source: `read` returns bytes read (0: EOF).
Result<std::optional<std::string>> read_frame_from(const std::function<Result<std::size_t>(char*, std::size_t)>& read);
// write_frame: encodes and writes it whole. Errors: as encode_frame, os_error.
Result<void> write_frame(int fd, std::string_view body);

}  // namespace courier::protocol
