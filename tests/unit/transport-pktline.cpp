// transport-pktline.cpp — the pkt-line codec: lengths, caps, control
// packets, and truncation told apart from a clean end.
#include <doctest/doctest.h>

#include <vector>

#include "data/transport/captures.hpp"
#include "transport/pktline.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_transport_pktline {

using namespace courier;
using namespace courier::transport;

namespace {

// Every packet the decoder yields for `bytes` fed in one piece, then finish().
struct Decoded {
  std::vector<Pkt> pkts;
  Result<void> end;
};

Decoded decode_all(std::string_view bytes) {
  PktDecoder d;
  d.feed(bytes);
  Decoded out;
  for (;;) {
    auto next = d.next();
    if (!next) {
      out.end = tl::unexpected<Error>(next.error());
      return out;
    }
    if (!*next) break;
    out.pkts.push_back(**next);
  }
  out.end = d.finish();
  return out;
}

Pkt data(std::string payload) { return Pkt{PktKind::data, std::move(payload)}; }
Pkt control(PktKind kind) { return Pkt{kind, {}}; }

}  // namespace

TEST_SUITE("transport") {
  TEST_CASE("a data packet's 4-hex length counts its own 4 header bytes") {
    CHECK(*encode_pkt("hello\n") == "000ahello\n");
    CHECK(*encode_pkt("") == "0004");
    CHECK(encode_pkt(std::string(300, 'x'))->substr(0, 4) == "0130");
  }

  TEST_CASE("the encoder accepts a 65520-byte packet and refuses one byte more, producing nothing") {
    auto biggest = encode_pkt(std::string(kMaxPktPayload, 'x'));
    REQUIRE(biggest.has_value());
    CHECK(biggest->size() == kMaxPkt);
    CHECK(biggest->substr(0, 4) == "fff0");

    auto over = encode_pkt(std::string(kMaxPktPayload + 1, 'x'));
    REQUIRE_FALSE(over.has_value());
    CHECK(over.error().code == Errc::pkt_too_large);
  }

  TEST_CASE("flush, delim and response-end decode as control packets, 0004 as an empty data packet") {
    auto d = decode_all("0000000100020004");
    REQUIRE(d.end.has_value());
    CHECK(d.pkts ==
          std::vector<Pkt>{control(PktKind::flush), control(PktKind::delim), control(PktKind::response_end), data("")});
    CHECK(kFlushPkt == "0000");
    CHECK(kDelimPkt == "0001");
    CHECK(kResponseEndPkt == "0002");
  }

  TEST_CASE("the decoder returns the same packets however the bytes are split") {
    const std::string stream = *encode_pkt("first\n") + std::string(kFlushPkt) + *encode_pkt(std::string(1000, 'z'));
    for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{5}, std::size_t{4096}}) {
      PktDecoder d;
      std::vector<Pkt> got;
      for (std::size_t at = 0; at < stream.size(); at += chunk) {
        d.feed(std::string_view(stream).substr(at, chunk));
        for (;;) {
          auto next = d.next();
          REQUIRE(next.has_value());
          if (!*next) break;
          got.push_back(**next);
        }
      }
      CHECK(got == std::vector<Pkt>{data("first\n"), control(PktKind::flush), data(std::string(1000, 'z'))});
      CHECK(d.buffered() == 0);
      CHECK(d.finish().has_value());
    }
  }

  TEST_CASE("a real advertisement from git http-backend decodes to its packets and ends cleanly") {
    auto d = decode_all(test::captures::kAdvNonEmpty);
    REQUIRE(d.end.has_value());
    REQUIRE(d.pkts.size() == 6);
    CHECK(d.pkts[0] == data("# service=git-receive-pack\n"));
    CHECK(d.pkts[1].kind == PktKind::flush);
    CHECK(d.pkts[2].payload.substr(0, 41) == std::string(test::captures::kC1) + " ");
    CHECK(d.pkts[5].kind == PktKind::flush);
  }

  TEST_CASE("lengths that are not 4 hex digits are refused, and the decoder stays failed") {
    for (std::string_view bad : {"00g0", "-001", " 004", "0x10", "000\n"}) {
      PktDecoder d;
      d.feed(bad);
      d.feed("more bytes");
      auto next = d.next();
      REQUIRE_FALSE(next.has_value());
      CHECK(next.error().code == Errc::pkt_invalid_length);
      CHECK(d.next().error().code == Errc::pkt_invalid_length);
      CHECK(d.finish().error().code == Errc::pkt_invalid_length);
    }
  }

  TEST_CASE("uppercase hex lengths are read as git reads them") {
    auto d = decode_all("000Ahello\n");
    REQUIRE(d.end.has_value());
    CHECK(d.pkts == std::vector<Pkt>{data("hello\n")});
  }

  TEST_CASE("length 0003 is invalid: a data packet cannot be shorter than its header") {
    auto d = decode_all("0003x");
    REQUIRE_FALSE(d.end.has_value());
    CHECK(d.end.error().code == Errc::pkt_invalid_length);
  }

  TEST_CASE("a length over 65520 is refused from the header alone, before its payload arrives") {
    for (std::string_view header : {"fff1", "ffff"}) {
      PktDecoder d;
      d.feed(header);
      auto next = d.next();
      REQUIRE_FALSE(next.has_value());
      CHECK(next.error().code == Errc::pkt_too_large);
    }
    auto biggest = decode_all(*encode_pkt(std::string(kMaxPktPayload, 'y')));
    REQUIRE(biggest.end.has_value());
    REQUIRE(biggest.pkts.size() == 1);
    CHECK(biggest.pkts[0].payload.size() == kMaxPktPayload);
  }

  TEST_CASE("input that ends between packets is a clean end; inside a length or a payload it is truncated") {
    CHECK(decode_all("").end.has_value());
    CHECK(decode_all("0000").end.has_value());
    for (std::string_view cut : {"0", "00", "000", "0000000", "000ahel", "000a"}) {
      auto d = decode_all(cut);
      REQUIRE_FALSE(d.end.has_value());
      CHECK(d.end.error().code == Errc::pkt_truncated);
    }
  }

  TEST_CASE("every proper prefix of a real advertisement either ends cleanly at a packet boundary or is truncated") {
    const std::string_view adv = test::captures::kAdvNonEmpty;
    std::size_t clean = 0;
    for (std::size_t n = 0; n < adv.size(); ++n) {
      auto d = decode_all(adv.substr(0, n));
      if (d.end) {
        ++clean;
      } else {
        CHECK(d.end.error().code == Errc::pkt_truncated);
      }
    }
    CHECK(clean == 6);  // the empty input and the end of each of the first five packets
  }
}

}  // namespace unit_transport_pktline
