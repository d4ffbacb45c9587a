// protocol-frame.cpp — rule P1: the frame codec and its caps.
#include <doctest/doctest.h>
#include <unistd.h>

#include "alloc_probe.hpp"
#include "protocol/frame.hpp"
#include "support.hpp"
#include "sys/io.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_protocol_frame {

using namespace courier;
using namespace courier::protocol;

namespace {
std::string header(std::uint32_t n) {
  return {static_cast<char>(n >> 24), static_cast<char>((n >> 16) & 0xFF), static_cast<char>((n >> 8) & 0xFF),
          static_cast<char>(n & 0xFF)};
}
}  // namespace

TEST_SUITE("protocol") {
  TEST_CASE("P1: the writer accepts a frame of exactly kMaxFrame bytes") {
    auto f = encode_frame(std::string(kMaxFrame, 'x'));
    REQUIRE(f.has_value());
    CHECK(f->size() == kMaxFrame + kFrameHeader);
    CHECK(f->substr(0, 4) == header(static_cast<std::uint32_t>(kMaxFrame)));
  }

  TEST_CASE("P1: the writer refuses a frame of kMaxFrame + 1 bytes and produces nothing") {
    auto f = encode_frame(std::string(kMaxFrame + 1, 'x'));
    REQUIRE_FALSE(f.has_value());
    CHECK(f.error().code == Errc::frame_too_large);
    // write_frame must not put a single byte on the descriptor either.
    auto p = sys::make_pipe();
    REQUIRE(p);
    auto w = write_frame(p->write_end.get(), std::string(kMaxFrame + 1, 'x'));
    CHECK_FALSE(w.has_value());
    p->write_end.reset();
    char c;
    CHECK(::read(p->read_end.get(), &c, 1) == 0);
  }

  TEST_CASE("P1: the writer refuses an empty frame and invalid UTF-8") {
    CHECK(encode_frame("").error().code == Errc::frame_empty);
    CHECK(encode_frame("{\"a\":\"\xC3\x28\"}").error().code == Errc::invalid_utf8);
  }

  TEST_CASE("P1: the decoder returns frames split across arbitrary feeds") {
    std::string stream = *encode_frame("{\"a\":1}") + *encode_frame("{\"b\":2}");
    FrameDecoder d;
    std::vector<std::string> got;
    for (char c : stream) {
      d.feed(&c, 1);
      for (;;) {
        auto r = d.next();
        REQUIRE(r.has_value());
        if (!*r) break;
        got.push_back(**r);
      }
    }
    CHECK(got == std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"});
    CHECK(d.finish().has_value());
  }

  TEST_CASE("P1: the reader refuses an over-cap length from the header alone, without allocating it") {
    FrameDecoder d;
    const std::string h = header(static_cast<std::uint32_t>(kMaxFrame + 1));
    d.feed(h.data(), h.size());
    auto r = d.next();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::frame_too_large);
    CHECK(d.buffered() == 4);

    // The blocking reader: a 4 GiB announcement with no body behind it.
    auto p = sys::make_pipe();
    REQUIRE(p);
    const std::string huge = header(0xFFFFFFFFu);
    REQUIRE(::write(p->write_end.get(), huge.data(), huge.size()) == 4);
    test::AllocProbe probe;
    auto rf = read_frame(p->read_end.get());
    const auto largest = probe.largest();
    REQUIRE_FALSE(rf.has_value());
    CHECK(rf.error().code == Errc::frame_too_large);
    CHECK_MESSAGE(largest < 4096, "largest allocation while refusing: ", largest);
  }

  TEST_CASE("P1: the blocking reader refuses a length of kMaxFrame + 1 from the header, before any body") {
    auto p = sys::make_pipe();
    REQUIRE(p);
    const std::string bytes = header(static_cast<std::uint32_t>(kMaxFrame + 1)) + "{}";
    REQUIRE(::write(p->write_end.get(), bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    p->write_end.reset();
    auto r = read_frame(p->read_end.get());
    REQUIRE_FALSE(r.has_value());
    CHECK_MESSAGE(r.error().code == Errc::frame_too_large,
                  "read_frame took a length of kMaxFrame + 1 as a frame to read: ", r.error().message);
  }

  TEST_CASE("P1: the reader accepts a frame of exactly kMaxFrame bytes") {
    FrameDecoder d;
    const std::string f = header(static_cast<std::uint32_t>(kMaxFrame)) + std::string(kMaxFrame, ' ');
    d.feed(f.data(), f.size());
    auto r = d.next();
    REQUIRE(r.has_value());
    REQUIRE(r->has_value());
    CHECK((*r)->size() == kMaxFrame);
  }

  TEST_CASE("P1: end of file inside the length is a truncated frame, not a clean end") {
    for (std::size_t k = 1; k <= 3; ++k) {
      FrameDecoder d;
      const std::string h = header(10).substr(0, k);
      d.feed(h.data(), h.size());
      auto r = d.next();
      REQUIRE(r.has_value());
      CHECK_FALSE(r->has_value());
      auto fin = d.finish();
      REQUIRE_FALSE(fin.has_value());
      CHECK(fin.error().code == Errc::frame_truncated_length);
    }
  }

  TEST_CASE("P1: end of file inside the body is a truncated frame; at a boundary it is a clean end") {
    FrameDecoder d;
    const std::string f = header(10) + "{\"a\":";
    d.feed(f.data(), f.size());
    CHECK_FALSE(d.next()->has_value());
    CHECK(d.finish().error().code == Errc::frame_truncated_body);

    FrameDecoder clean;
    CHECK(clean.finish().has_value());

    // The blocking reader agrees on both.
    for (auto [bytes, code] : {std::pair{header(10).substr(0, 2), Errc::frame_truncated_length},
                               std::pair{header(10) + "{\"a\"", Errc::frame_truncated_body}}) {
      auto p = sys::make_pipe();
      REQUIRE(::write(p->write_end.get(), bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
      p->write_end.reset();
      auto r = read_frame(p->read_end.get());
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == code);
    }
    auto p = sys::make_pipe();
    p->write_end.reset();
    auto r = read_frame(p->read_end.get());
    REQUIRE(r.has_value());
    CHECK_FALSE(r->has_value());
  }

  TEST_CASE("P1: a zero-length frame is malformed") {
    FrameDecoder d;
    const std::string h = header(0);
    d.feed(h.data(), h.size());
    CHECK(d.next().error().code == Errc::frame_empty);
  }

  TEST_CASE("P1: a frame that is not valid UTF-8 is refused by the reader") {
    for (std::string bad : {std::string("\xC3\x28"), std::string("\xED\xA0\x80"), std::string("\xC0\xAF"),
                            std::string("\xF4\x90\x80\x80"), std::string("\xE2\x82")}) {
      FrameDecoder d;
      const std::string f = test::raw_frame("\"" + bad + "\"");
      d.feed(f.data(), f.size());
      CHECK(d.next().error().code == Errc::invalid_utf8);
    }
    CHECK(is_valid_utf8("plain ascii, \xC3\xA9t\xC3\xA9, \xF0\x9F\x98\x80"));
  }
}

}  // namespace unit_protocol_frame
