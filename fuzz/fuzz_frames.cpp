// fuzz_frames.cpp — libFuzzer target: arbitrary bytes from a child through
// the frame decoder, the message decoder and the parent's state machine.
// Nothing here may crash, leak or trip a sanitizer; every input ends in a
// value or an Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "protocol/frame.hpp"
#include "protocol/messages.hpp"
#include "protocol/session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace courier::protocol;
  FrameDecoder decoder;
  ParentSession session({std::string(40, 'a'), (size % 2) == 0});
  // Feed in two pieces so split frames are exercised too.
  const std::size_t half = size / 2;
  decoder.feed(reinterpret_cast<const char*>(data), half);
  for (int round = 0; round < 2; ++round) {
    for (;;) {
      auto frame = decoder.next();
      if (!frame || !*frame) break;
      auto child = decode_child(**frame);
      if (child) {
        (void)session.accept(*child);
        auto again = encode(*child);
        if (!again) __builtin_trap();  // what decodes must encode
      }
      (void)decode_parent(**frame);
    }
    if (round == 0) decoder.feed(reinterpret_cast<const char*>(data) + half, size - half);
  }
  (void)decoder.finish();
  return 0;
}
