// progress_view.cpp — git-like progress and remote lines on stderr (see the
// header).
#include "cli/progress_view.hpp"

#include "wire/text.hpp"

namespace courier::cli {

using wire::terminal_safe;

namespace {

// At most one redraw of a meter per this interval (its final line always).
constexpr sys::MonoNs kRedrawInterval = 100 * sys::kNsPerMs;

// "N.NN <unit>" with git's truncating arithmetic, or "N bytes".
std::string scaled(std::uint64_t n, const char* suffix) {
  char buf[64];
  constexpr std::uint64_t kKi = 1024;
  const struct {
    std::uint64_t size;
    const char* unit;
  } units[] = {{kKi * kKi * kKi, "GiB"}, {kKi * kKi, "MiB"}, {kKi, "KiB"}};
  for (const auto& u : units) {
    if (n >= u.size) {
      std::snprintf(buf, sizeof buf, "%llu.%2.2llu %s%s", static_cast<unsigned long long>(n / u.size),
                    static_cast<unsigned long long>((n % u.size) * 100 / u.size), u.unit, suffix);
      return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%llu %s%s", static_cast<unsigned long long>(n), n == 1 ? "byte" : "bytes", suffix);
  return buf;
}

}  // namespace

std::string human_bytes(std::uint64_t n) { return scaled(n, ""); }

std::string human_rate(double bytes_per_second) {
  return scaled(bytes_per_second > 0 ? static_cast<std::uint64_t>(bytes_per_second) : 0, "/s");
}

std::string_view meter_title(std::string_view phase) {
  if (phase == "enumerate") return "Enumerating objects";
  if (phase == "count") return "Counting objects";
  if (phase == "compress") return "Compressing objects";
  if (phase == "upload") return "Writing objects";
  return {};
}

void ProgressView::on(const DeliveryEvent& e) {
  std::lock_guard<std::mutex> lock(mu_);
  const sys::MonoNs now = sys::mono_now_ns();
  if (e.kind == DeliveryEvent::Kind::pending || e.kind == DeliveryEvent::Kind::seat_granted) {
    on_lane(e, now);
    return;
  }
  if (e.kind != DeliveryEvent::Kind::progress) return;
  if (!meter_title(e.phase).empty()) {
    if (o_.meters) on_meter(e, now);
  } else if (e.phase == "remote") {
    if (o_.messages) on_remote(e);
  } else if (e.phase == "remote_progress" && o_.meters && o_.messages) {
    if (phase_ != e.phase) close_phase();
    phase_ = e.phase;
    draw("remote: " + terminal_safe(e.text), "\r");
  }
}

// X-OUT2: a lane wait is said when it starts (its holder named) and when
// it ends, with meters or with -v; never with --quiet.
void ProgressView::on_lane(const DeliveryEvent& e, sys::MonoNs now) {
  if (!(o_.meters || o_.waits) || !o_.messages) return;
  if (e.kind == DeliveryEvent::Kind::seat_granted) {
    if (wait_began_ == 0) return;
    end_open_line();
    std::fprintf(o_.out, "lane %s is free after %.1f s; delivering\n", lane_.c_str(),
                 static_cast<double>(now - wait_began_) / 1e9);
    std::fflush(o_.out);
    wait_began_ = 0;
    return;
  }
  if (wait_began_ != 0) return;  // said once, however often the wait is announced
  wait_began_ = now;
  end_open_line();
  const std::string holder = e.holder_pid ? "pid " + std::to_string(e.holder_pid)
                                          : (e.holder.empty() ? "another delivery" : terminal_safe(e.holder));
  std::fprintf(o_.out, "waiting for lane %s (held by %s)\n", lane_.c_str(), holder.c_str());
  std::fflush(o_.out);
}

void ProgressView::say(std::string_view line) {
  std::lock_guard<std::mutex> lock(mu_);
  end_open_line();
  std::fprintf(o_.out, "%s\n", terminal_safe(line).c_str());
  std::fflush(o_.out);
}

void ProgressView::on_meter(const DeliveryEvent& e, sys::MonoNs now) {
  if (e.phase != phase_) {
    close_phase();
    phase_ = e.phase;
    rate_ = RateMeter();
    drawn_at_ = 0;
  }
  if (e.phase == "upload") rate_.add(now, e.done);
  last_ = e;
  pending_ = true;
  const std::string line = std::string(meter_title(e.phase)) + ": " + counters(e);
  if (e.total > 0 && e.done >= e.total) {
    draw(line, ", done.\n");
    phase_.clear();
    pending_ = false;
    return;
  }
  if (drawn_at_ != 0 && now - drawn_at_ < kRedrawInterval) return;
  draw(line, "\r");
  drawn_at_ = now;
  pending_ = false;
}

void ProgressView::on_remote(const DeliveryEvent& e) {
  const std::string line = "remote: " + terminal_safe(e.text);
  if (open_ && phase_ == "remote_progress") {
    // The remote's meter ends with its final line, drawn over it (as git).
    phase_.clear();
  } else {
    end_open_line();
  }
  draw(line, "\n");
}

void ProgressView::log(std::string_view line) {
  std::lock_guard<std::mutex> lock(mu_);
  end_open_line();
  std::fprintf(o_.out, "git-courier: %s\n", terminal_safe(line).c_str());
  std::fflush(o_.out);
}

void ProgressView::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  end_open_line();
  phase_.clear();
}

// A phase ends when the next begins: a meter of ours gets its final line
// with ", done." (its true last count, even one the 100 ms rule held
// back); the remote's meter line is left as it stands.
void ProgressView::close_phase() {
  if (phase_.empty()) return;
  if (!meter_title(phase_).empty()) {
    draw(std::string(meter_title(phase_)) + ": " + counters(last_), ", done.\n");
  } else {
    end_open_line();
  }
  phase_.clear();
  pending_ = false;
}

std::string ProgressView::counters(const DeliveryEvent& e) const {
  char buf[128];
  // An upload too small or too quick to measure has no rate to show: git
  // shows none rather than "0 bytes/s".
  const double rate = rate_.rate();
  const std::string shown_rate = rate > 0 ? " | " + human_rate(rate) : std::string();
  if (e.phase == "upload" && e.total == 0) {
    // A streamed body: its length is known only at its end.
    std::snprintf(buf, sizeof buf, "%s%s", human_bytes(e.done).c_str(), shown_rate.c_str());
  } else if (e.phase == "upload") {
    const auto pct = static_cast<unsigned>(e.total ? e.done * 100 / e.total : 0);
    std::snprintf(buf, sizeof buf, "%3u%% (%s/%s)%s", pct, human_bytes(e.done).c_str(), human_bytes(e.total).c_str(),
                  shown_rate.c_str());
  } else if (e.total > 0) {
    std::snprintf(buf, sizeof buf, "%3u%% (%llu/%llu)", static_cast<unsigned>(e.done * 100 / e.total),
                  static_cast<unsigned long long>(e.done), static_cast<unsigned long long>(e.total));
  } else {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(e.done));
  }
  return buf;
}

// One line: blanks over what a longer line drawn before left, then `end`
// ("\r" keeps the line open for the next redraw).
void ProgressView::draw(const std::string& line, const char* end) {
  const std::size_t pad = open_ && open_len_ > line.size() ? open_len_ - line.size() : 0;
  std::fprintf(o_.out, "%s%*s%s", line.c_str(), static_cast<int>(pad), "", end);
  std::fflush(o_.out);
  open_ = std::string_view(end) == "\r";
  open_len_ = open_ ? line.size() : 0;
}

void ProgressView::end_open_line() {
  if (!open_) return;
  std::fputc('\n', o_.out);
  std::fflush(o_.out);
  open_ = false;
  open_len_ = 0;
}

}  // namespace courier::cli
