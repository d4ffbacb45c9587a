// fuzz_transport.cpp — libFuzzer target: arbitrary bytes from a remote
// through the pkt-line decoder, the ref advertisement parser and the
// report-status reader (plain and side-band), then the request builder and
// the verdict. Nothing may crash or trip a sanitizer, and the invariants
// below hold for every input: whatever the decoder accepts re-encodes to a
// packet that decodes the same, a built request is a well-formed packet, and
// "delivered" is only ever said for an `ok` line naming our ref.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "transport/advertisement.hpp"
#include "transport/oid.hpp"
#include "transport/pktline.hpp"
#include "transport/report.hpp"
#include "transport/request.hpp"

namespace {

using namespace courier::transport;

constexpr std::string_view kRef = "refs/heads/main";
constexpr std::string_view kNewOid = "b510cf7cd1e0b0d557a4f705852fead3387af1df";

void pkt_roundtrip(std::string_view input) {
  PktDecoder decoder;
  const std::size_t half = input.size() / 2;
  decoder.feed(input.substr(0, half));
  for (int round = 0; round < 2; ++round) {
    for (;;) {
      auto pkt = decoder.next();
      if (!pkt || !*pkt) break;
      if ((*pkt)->kind != PktKind::data) continue;
      auto again = encode_pkt((*pkt)->payload);
      if (!again) __builtin_trap();  // what decodes must encode
      PktDecoder check;
      check.feed(*again);
      auto back = check.next();
      if (!back || !*back || **back != **pkt || check.buffered() != 0) __builtin_trap();
    }
    if (round == 0) decoder.feed(input.substr(half));
  }
  (void)decoder.finish();
}

void advertisement(std::string_view input) {
  auto adv = parse_advertisement(input);
  if (!adv) return;
  for (const auto& [name, oid] : adv->refs) {
    if (!is_valid_oid(oid) || is_zero_oid(oid)) __builtin_trap();
  }
  auto req = build_push_request(*adv, {{std::string(kRef), std::string(kNewOid)}});
  if (!req) return;
  if (req->commands[0].old_oid != adv->oid_of(kRef)) __builtin_trap();  // T4: the advertised old id, nothing else
  PktDecoder check;
  check.feed(req->body_prefix);
  auto command = check.next();
  auto flush = check.next();
  if (!command || !*command || (*command)->kind != PktKind::data) __builtin_trap();
  if (!flush || !*flush || (*flush)->kind != PktKind::flush || check.buffered() != 0) __builtin_trap();
}

void report(std::string_view input, bool side_band) {
  ReportReader reader(side_band);
  // Three pieces, so packets split across reads are exercised too.
  const std::size_t a = input.size() / 3;
  const std::size_t b = 2 * input.size() / 3;
  for (std::string_view piece : {input.substr(0, a), input.substr(a, b - a), input.substr(b)}) {
    if (!reader.feed(piece)) break;
  }
  auto parsed = reader.finish();
  auto whole = parse_report(input, side_band);
  if (parsed.has_value() != whole.has_value()) __builtin_trap();  // splitting must not change the answer
  if (!parsed) return;
  if (*parsed != whole->report) __builtin_trap();
  auto verdict = judge_report(*parsed, {std::string(kRef)});
  if (verdict && verdict->size() == 1 && verdict->front().ok) {
    if (!parsed->unpack_ok() || parsed->refs.size() != 1 || !parsed->refs[0].ok || parsed->refs[0].ref != kRef) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  pkt_roundtrip(input);
  advertisement(input);
  report(input, false);
  report(input, true);
  return 0;
}
