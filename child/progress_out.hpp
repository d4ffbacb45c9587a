// progress_out.hpp — the child's progress frames to the parent, throttled
// within a phase, and the remote's own words (side-band 2) relayed as git
// shows them and kept for the result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "child/channel.hpp"
#include "protocol/messages.hpp"
#include "sys/clock.hpp"
#include "transport/sideband_text.hpp"

namespace courier::child {

class ProgressOut {
 public:
  explicit ProgressOut(Channel& ch) : ch_(ch) {}

  // Numeric progress, at most one frame per 100 ms within a phase when
  // throttled. An update held back is sent before the next phase begins
  // and by flush(), so every phase ends on its true last count.
  void progress(const std::string& phase, std::uint64_t done, std::uint64_t total, bool throttle = false);
  // A frame that carries a fact (never held back): what waits of another
  // phase goes first, so every phase still ends on its true last count.
  void send(const protocol::Progress& p);
  void flush();
  // One line of text in `phase` ("remote", "remote_progress").
  void text(const std::string& phase, const std::string& text);

 private:
  static constexpr sys::MonoNs kInterval = 100 * sys::kNsPerMs;
  Channel& ch_;
  sys::MonoNs last_ = 0;
  std::string last_phase_;
  std::optional<protocol::Progress> held_;
};

// The remote's side-band 2 lines, as git shows them: a line ended by a
// newline is a message (sent, and kept in the result's remote_messages, at
// most kMaxRemoteMessages, the earliest dropped and counted), one ended by
// a carriage return a meter the next replaces (sent only). Empty lines say
// nothing and are skipped.
void relay_remote_lines(const std::vector<transport::SidebandLine>& lines, ProgressOut& out,
                        protocol::ResultMsg& result);

// A rejection in the hook's own words: git prints the reason receive-pack
// gives ("pre-receive hook declined") and, above it, what the hook said as
// `remote:` lines. The reason carries the last of those lines too, so that
// a log that keeps one line keeps why: " (remote: a | b | c)", or "".
std::string hook_words(const std::vector<std::string>& said);

}  // namespace courier::child
