// fuzz_service_answer.cpp — libFuzzer target: arbitrary bytes as the
// service's answers to `push --via` (cli/via_answer.*): a refusal, the
// submission's answer, a revocation's answer, an event line. The socket's
// peer may not be git-courier at all. Oracles: nothing crashes or throws;
// an accepted submission has an id; an event has a sequence number.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cli/via_answer.hpp"

using namespace courier;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  // The first byte picks the status the answer came with.
  const long status = data[0] % 2 == 0 ? 200 : 202;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  (void)cli::refusal_message(400 + data[0], body);
  if (auto s = cli::read_submit_answer(status, body); s && s->id.empty()) std::abort();
  (void)cli::read_revoke_answer(body);
  if (auto e = cli::read_event_line(body); e && e->seq == 0) std::abort();
  return 0;
}
