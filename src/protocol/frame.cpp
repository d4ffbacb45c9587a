// frame.cpp — the length-prefixed frame codec (rule P1).
#include "protocol/frame.hpp"

#include <cerrno>
#include <cstring>

#include "sys/io.hpp"

namespace courier::protocol {

namespace {

std::uint32_t read_be32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) | std::uint32_t{u[3]};
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

Result<std::string> encode_frame(std::string_view body) {
  if (body.empty()) return fail(Errc::frame_empty, "refusing to write an empty frame");
  if (body.size() > kMaxFrame) {
    return fail(Errc::frame_too_large, "refusing to write a frame of " + std::to_string(body.size()) +
                                           " bytes: over the cap of " + std::to_string(kMaxFrame));
  }
  if (!is_valid_utf8(body)) return fail(Errc::invalid_utf8, "frame body is not valid UTF-8");
  const auto n = static_cast<std::uint32_t>(body.size());
  std::string out;
  out.reserve(kFrameHeader + body.size());
  out.push_back(static_cast<char>((n >> 24) & 0xFF));
  out.push_back(static_cast<char>((n >> 16) & 0xFF));
  out.push_back(static_cast<char>((n >> 8) & 0xFF));
  out.push_back(static_cast<char>(n & 0xFF));
  out.append(body);
  return out;
}

void FrameDecoder::feed(const char* data, std::size_t len) {
  if (failed_) return;
  // Compact before growing so the buffer never holds consumed frames.
  if (pos_ > 0) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  buf_.append(data, len);
}

Result<std::optional<std::string>> FrameDecoder::next() {
  if (failed_) return tl::unexpected(*failed_);
  const std::size_t avail = buf_.size() - pos_;
  if (avail < kFrameHeader) return std::optional<std::string>{};
  const std::uint32_t n = read_be32(buf_.data() + pos_);
  if (n == 0) {
    failed_ = Error{Errc::frame_empty, "received a zero-length frame"};
    return tl::unexpected(*failed_);
  }
  if (n > kMaxFrame) {
    failed_ = Error{Errc::frame_too_large, "received a frame header announcing " + std::to_string(n) +
                                               " bytes: over the cap of " + std::to_string(kMaxFrame)};
    return tl::unexpected(*failed_);
  }
  if (avail - kFrameHeader < n) return std::optional<std::string>{};
  std::string body = buf_.substr(pos_ + kFrameHeader, n);
  pos_ += kFrameHeader + n;
  if (!is_valid_utf8(body)) {
    failed_ = Error{Errc::invalid_utf8, "received a frame that is not valid UTF-8"};
    return tl::unexpected(*failed_);
  }
  return std::optional<std::string>{std::move(body)};
}

Result<void> FrameDecoder::finish() const {
  if (failed_) return tl::unexpected(*failed_);
  const std::size_t avail = buf_.size() - pos_;
  if (avail == 0) return {};
  if (avail < kFrameHeader) {
    return fail(Errc::frame_truncated_length, "end of file after " + std::to_string(avail) + " of 4 length bytes");
  }
  return fail(Errc::frame_truncated_body, "end of file inside a frame body (" + std::to_string(avail - kFrameHeader) +
                                              " of " + std::to_string(read_be32(buf_.data() + pos_)) + " bytes)");
}

Result<std::optional<std::string>> read_frame(int fd) {
  return read_frame_from([fd](char* buf, std::size_t len) { return sys::read_some(fd, buf, len); });
}

Result<std::optional<std::string>> read_frame_from(const std::function<Result<std::size_t>(char*, std::size_t)>& read) {
  char header[kFrameHeader];
  std::size_t got = 0;
  while (got < kFrameHeader) {
    auto r = read(header + got, kFrameHeader - got);
    if (!r) return tl::unexpected(r.error());
    if (*r == 0) {
      if (got == 0) return std::optional<std::string>{};
      return fail(Errc::frame_truncated_length, "end of file after " + std::to_string(got) + " of 4 length bytes");
    }
    got += *r;
  }
  const std::uint32_t n = read_be32(header);
  if (n == 0) return fail(Errc::frame_empty, "received a zero-length frame");
  if (n > kMaxFrame) {
    return fail(Errc::frame_too_large, "received a frame header announcing " + std::to_string(n) +
                                           " bytes: over the cap of " + std::to_string(kMaxFrame));
  }
  std::string body(n, '\0');
  std::size_t have = 0;
  while (have < n) {
    auto r = read(body.data() + have, n - have);
    if (!r) return tl::unexpected(r.error());
    if (*r == 0) {
      return fail(Errc::frame_truncated_body,
                  "end of file inside a frame body (" + std::to_string(have) + " of " + std::to_string(n) + " bytes)");
    }
    have += *r;
  }
  if (!is_valid_utf8(body)) return fail(Errc::invalid_utf8, "received a frame that is not valid UTF-8");
  return std::optional<std::string>{std::move(body)};
}

Result<void> write_frame(int fd, std::string_view body) {
  auto frame = encode_frame(body);
  if (!frame) return tl::unexpected(frame.error());
  return sys::write_all(fd, frame->data(), frame->size());
}

}  // namespace courier::protocol
