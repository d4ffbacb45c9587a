// progress_out.cpp — throttled progress frames and the remote's words
// (progress_out.hpp).
#include "child/progress_out.hpp"

#include "wire/text.hpp"

namespace courier::child {

void ProgressOut::progress(const std::string& phase, std::uint64_t done, std::uint64_t total, bool throttle) {
  const sys::MonoNs now = sys::mono_now_ns();
  if (held_ && held_->phase != phase) flush();
  if (throttle && phase == last_phase_ && now - last_ < kInterval) {
    held_ = protocol::Progress{phase, done, total, std::nullopt};
    return;
  }
  held_.reset();
  last_ = now;
  last_phase_ = phase;
  (void)ch_.send(protocol::Progress{phase, done, total, std::nullopt});
}

void ProgressOut::send(const protocol::Progress& p) {
  if (held_ && held_->phase != p.phase) flush();
  held_.reset();
  last_ = sys::mono_now_ns();
  last_phase_ = p.phase;
  (void)ch_.send(p);
}

void ProgressOut::flush() {
  if (!held_) return;
  last_ = sys::mono_now_ns();
  (void)ch_.send(*held_);
  held_.reset();
}

void ProgressOut::text(const std::string& phase, const std::string& text) {
  (void)ch_.send(protocol::Progress{phase, 0, 0, text});
}

void relay_remote_lines(const std::vector<transport::SidebandLine>& lines, ProgressOut& out,
                        protocol::ResultMsg& result) {
  for (const auto& line : lines) {
    if (line.text.empty()) continue;
    const std::string text = wire::server_text(line.text, protocol::kMaxRemoteLine);
    if (line.update) {
      out.text("remote_progress", text);
      continue;
    }
    out.text("remote", text);
    result.remote_messages.push_back(text);
    if (result.remote_messages.size() > protocol::kMaxRemoteMessages) {
      result.remote_messages.erase(result.remote_messages.begin());
      result.remote_messages_dropped = result.remote_messages_dropped.value_or(0) + 1;
    }
  }
}

std::string hook_words(const std::vector<std::string>& said) {
  constexpr std::size_t kLines = 3;
  if (said.empty()) return "";
  std::string words;
  for (std::size_t i = said.size() > kLines ? said.size() - kLines : 0; i < said.size(); ++i) {
    words += (words.empty() ? "" : " | ") + said[i];
  }
  return " (remote: " + words + ")";
}

}  // namespace courier::child
