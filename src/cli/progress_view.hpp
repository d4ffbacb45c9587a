// progress_view.hpp — what a push shows a person while it runs, on stderr,
// the way git shows it:
//   * meters named as git names them ("Enumerating objects", "Counting
//     objects", "Compressing objects", "Writing objects"), with done/total
//     and a percentage where a total is known, redrawn in place ('\r') at
//     most every 100 ms, each ended by its final line with ", done.";
//     "Writing objects" counts the bytes of the upload (the pack is spooled
//     before it is sent) and shows the current rate (RateMeter: the last
//     second, not an average since the start);
//   * the remote's lines as "remote: <text>": its messages (hook output)
//     one per line, its own meters redrawn in place like ours;
//   * the supervisor's log lines ("git-courier: ...");
//   * a lane wait's start (its holder) and end, with meters or -v.
// Meters only when asked (a terminal, or --progress); messages unless
// --quiet. Thread-safe: events arrive from the executor's threads.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

#include "cli/rate_meter.hpp"
#include "courier/courier.hpp"

namespace courier::cli {

// "12.00 MiB", "512 bytes" — git's humanise_bytes.
std::string human_bytes(std::uint64_t n);
// "5.00 MiB/s", "12 bytes/s" — git's humanise_rate.
std::string human_rate(double bytes_per_second);

// The title git gives a phase of the child's progress ("compress" ->
// "Compressing objects"); empty for a phase that has no meter.
std::string_view meter_title(std::string_view phase);

class ProgressView {
 public:
  struct Options {
    bool meters = false;   // draw the meters (a terminal, or --progress)
    bool messages = true;  // the remote's messages and the lane wait (not --quiet)
    bool waits = false;    // the lane wait's start and end even without meters (-v)
    std::FILE* out = stderr;
  };
  explicit ProgressView(Options o) : o_(o) {}

  void set_lane(std::string lane) { lane_ = std::move(lane); }
  // A delivery event, as it arrives.
  void on(const DeliveryEvent& e);
  // One supervisor log line (shown by the caller's choice: -v).
  void log(std::string_view line);
  // One line of the command's own (a signal's word), on a line of its own:
  // a meter drawn in place is ended first, never written over.
  void say(std::string_view line);
  // The delivery is over: a meter still open gets its line ended.
  void finish();

 private:
  void on_lane(const DeliveryEvent& e, sys::MonoNs now);
  void on_meter(const DeliveryEvent& e, sys::MonoNs now);
  void on_remote(const DeliveryEvent& e);
  void draw(const std::string& line, const char* end);
  void end_open_line();
  std::string counters(const DeliveryEvent& e) const;
  void close_phase();

  Options o_;
  std::mutex mu_;
  std::string lane_;
  sys::MonoNs wait_began_ = 0;  // the lane wait said (0: none, or over)
  // The meter being drawn: its phase, its last event, when it was drawn.
  std::string phase_;
  DeliveryEvent last_;
  bool pending_ = false;  // last_ not drawn yet (held back by the 100 ms rule)
  sys::MonoNs drawn_at_ = 0;
  RateMeter rate_;
  // A line drawn with '\r' and not yet ended, and its length (to blank
  // what a shorter line would leave of it).
  bool open_ = false;
  std::size_t open_len_ = 0;
};

}  // namespace courier::cli
