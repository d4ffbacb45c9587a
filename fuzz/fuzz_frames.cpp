// fuzz_frames.cpp — libFuzzer target: arbitrary bytes from a child through
// the frame decoder, the message decoders and the parent's state machine.
// Nothing here may crash, leak or trip a sanitizer; every input ends in a
// value or an Error. Two of the parent's checks are also held against an
// independent oracle: a body with a key twice in one object never decodes,
// and a result the state machine accepts names exactly the job's ref and oid.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/frame.hpp"
#include "protocol/messages.hpp"
#include "protocol/session.hpp"

namespace {

const std::string kGatedRef = "refs/heads/main";

// The oracle for duplicate keys: a permissive parse (last key wins) keeps one
// member per distinct key, while a SAX pass counts every key as written. The
// two differ exactly when some object has a key twice.
struct KeyCounter : nlohmann::json_sax<nlohmann::json> {
  std::size_t keys = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override {
    ++keys;
    return true;
  }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

std::size_t members(const nlohmann::json& j) {
  std::size_t n = 0;
  if (j.is_object()) n += j.size();
  if (j.is_structured()) {
    for (const auto& e : j) n += members(e);
  }
  return n;
}

bool has_duplicate_key(const std::string& body) {
  KeyCounter counter;
  if (!nlohmann::json::sax_parse(body, &counter)) return false;  // not JSON at all
  const auto dom = nlohmann::json::parse(body, nullptr, false);
  return !dom.is_discarded() && members(dom) != counter.keys;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace courier::protocol;
  FrameDecoder decoder;
  ParentSession::Config config;
  config.gated_refs = {std::string(kGatedRef)};
  config.authenticated = (size % 2) == 0;
  ParentSession session(config);
  // Feed in two pieces so split frames are exercised too.
  const std::size_t half = size / 2;
  decoder.feed(reinterpret_cast<const char*>(data), half);
  for (int round = 0; round < 2; ++round) {
    for (;;) {
      auto frame = decoder.next();
      if (!frame || !*frame) break;
      auto child = decode_child(**frame);
      auto parent = decode_parent(**frame);
      // A body with a duplicate key is refused in both directions.
      if ((child || parent) && has_duplicate_key(**frame)) __builtin_trap();
      if (child) {
        if (session.accept(*child)) {
          const auto* r = std::get_if<ResultMsg>(&*child);
          // Another job's result taken, or delivered while its ref was not ok.
          if (r && (r->refs.size() != 1 || r->refs[0].ref != kGatedRef)) __builtin_trap();
          if (r && r->status == courier::wire::DeliveryStatus::delivered &&
              r->refs[0].status != courier::RefStatus::ok) {
            __builtin_trap();
          }
        }
        auto again = encode(*child);
        if (!again) __builtin_trap();  // what decodes must encode
      }
    }
    if (round == 0) decoder.feed(reinterpret_cast<const char*>(data) + half, size - half);
  }
  (void)decoder.finish();
  return 0;
}
