// cli-progress.cpp — progress as git shows it: the shipped CLI run with
// its stderr on a pseudo-terminal, pushing enough data through a fixture
// server that reads the upload slowly that "Writing objects" lasts seconds;
// the phases are git's, the remote's own progress shows as remote: lines,
// and the rate is the current one (checked against the progress lines' own
// counters and arrival times). Also the rate meter alone, fed samples.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/progress_view.hpp"
#include "cli/rate_meter.hpp"
#include "fixture_server.hpp"
#include "support.hpp"
#include "sys/clock.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cli_progress {

extern char** environ;

using namespace courier;

namespace {

// One piece of what the CLI wrote to its terminal: the text up to a '\r' or
// '\n', and when the read that brought that terminator returned.
struct Segment {
  std::string text;
  char end = '\n';
  sys::MonoNs at = 0;
};

struct PtyRun {
  int exit_code = -1;
  std::string out;  // stdout (a pipe)
  std::string raw;  // everything written to the terminal
  std::vector<Segment> segments;
};

// Runs argv with stdin /dev/null, stdout a pipe and stderr a pseudo-terminal
// in raw mode (no "\n" to "\r\n"), collects both, and waits for it.
PtyRun run_with_terminal_stderr(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  PtyRun r;
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  REQUIRE(master >= 0);
  REQUIRE(::grantpt(master) == 0);
  REQUIRE(::unlockpt(master) == 0);
  const char* name = ::ptsname(master);
  REQUIRE(name != nullptr);
  const int slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  REQUIRE(slave >= 0);
  termios tio{};
  REQUIRE(::tcgetattr(slave, &tio) == 0);
  ::cfmakeraw(&tio);
  REQUIRE(::tcsetattr(slave, TCSANOW, &tio) == 0);
  int out[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);

  posix_spawn_file_actions_t fa;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  ::posix_spawn_file_actions_adddup2(&fa, slave, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  ::posix_spawn_file_actions_destroy(&fa);
  ::close(slave);
  ::close(out[1]);
  REQUIRE(rc == 0);

  std::string pending;
  bool term_open = true;
  bool out_open = true;
  char buf[65536];
  while (term_open || out_open) {
    pollfd fds[2] = {{master, POLLIN, 0}, {out[0], POLLIN, 0}};
    const int n = ::poll(fds, 2, 1000);
    if (n < 0 && errno == EINTR) continue;
    REQUIRE(n >= 0);
    if (term_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      const ssize_t got = ::read(master, buf, sizeof buf);
      const sys::MonoNs now = sys::mono_now_ns();
      if (got <= 0) {
        term_open = false;  // EIO: every writer of the terminal is gone
      } else {
        r.raw.append(buf, static_cast<std::size_t>(got));
        for (ssize_t i = 0; i < got; ++i) {
          if (buf[i] == '\r' || buf[i] == '\n') {
            r.segments.push_back(Segment{pending, buf[i], now});
            pending.clear();
          } else {
            pending.push_back(buf[i]);
          }
        }
      }
    }
    if (out_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      const ssize_t got = ::read(out[0], buf, sizeof buf);
      if (got <= 0) {
        out_open = false;
      } else {
        r.out.append(buf, static_cast<std::size_t>(got));
      }
    }
  }
  ::close(master);
  ::close(out[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Bytes no compressor can shrink (xorshift64*), the same for one seed.
std::string noise(std::size_t n, std::uint64_t seed) {
  std::string s(n, '\0');
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < n; i += 8) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    const std::uint64_t v = x * 0x2545F4914F6CDD1Dull;
    std::memcpy(&s[i], &v, std::min<std::size_t>(8, n - i));
  }
  return s;
}

// A repository whose push takes a while to write and gives the remote
// deltas to resolve: 120 text files in two versions (deltas, and over
// receive-pack's 100-object unpack limit, so it runs index-pack with its
// progress), then `noise_files` incompressible files of 2 MiB each.
void make_heavy_repo(const std::string& dir, int noise_files) {
  test::git_ok({"init", "-q", "-b", "main", dir});
  std::filesystem::create_directories(dir + "/text");
  auto write_text = [&](int version) {
    for (int f = 0; f < 120; ++f) {
      std::string body;
      for (int line = 0; line < 60; ++line) {
        body += "file " + std::to_string(f) + " line " + std::to_string(line) + ": the same words every time\n";
      }
      body += "version " + std::to_string(version) + "\n";
      test::write_file(dir + "/text/" + std::to_string(f) + ".txt", body);
    }
  };
  write_text(1);
  test::git_ok({"add", "-A"}, dir);
  test::git_ok({"commit", "-q", "-m", "text"}, dir);
  write_text(2);
  for (int i = 0; i < noise_files; ++i) {
    test::write_file(dir + "/noise-" + std::to_string(i) + ".bin",
                     noise(2 * 1024 * 1024, static_cast<std::uint64_t>(i) + 1));
  }
  test::git_ok({"add", "-A"}, dir);
  test::git_ok({"commit", "-q", "-m", "noise"}, dir);
}

// "12.00 MiB" -> bytes.
double size_of(const std::string& text) {
  double n = 0;
  char unit[16] = {};
  if (std::sscanf(text.c_str(), "%lf %15s", &n, unit) != 2) return -1;
  const std::string u = unit;
  if (u.rfind("GiB", 0) == 0) return n * 1024 * 1024 * 1024;
  if (u.rfind("MiB", 0) == 0) return n * 1024 * 1024;
  if (u.rfind("KiB", 0) == 0) return n * 1024;
  if (u.rfind("byte", 0) == 0) return n;
  return -1;
}

// One "Writing objects:  45% (12.00 MiB/26.50 MiB) | 5.00 MiB/s" line.
struct WritingLine {
  double done = 0;
  double total = 0;
  double rate = 0;
  sys::MonoNs at = 0;
  bool final = false;
};

std::optional<WritingLine> parse_writing(const Segment& s) {
  const std::string& t = s.text;
  if (t.rfind("Writing objects:", 0) != 0) return std::nullopt;
  const auto open = t.find('(');
  const auto slash = t.find('/', open);
  const auto close = t.find(')', slash);
  const auto bar = t.find("| ", close);
  if (open == std::string::npos || slash == std::string::npos || close == std::string::npos ||
      bar == std::string::npos) {
    return std::nullopt;
  }
  WritingLine w;
  w.done = size_of(t.substr(open + 1, slash - open - 1));
  w.total = size_of(t.substr(slash + 1, close - slash - 1));
  w.rate = size_of(t.substr(bar + 2));
  w.at = s.at;
  w.final = t.find(", done.") != std::string::npos;
  return w;
}

bool any_starts(const std::vector<Segment>& segs, const std::string& prefix) {
  for (const auto& s : segs) {
    if (s.text.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

TEST_SUITE("cli") {
  TEST_CASE("progress: the rate meter reports the last second's rate, not the average since the start") {
    constexpr sys::MonoNs kSec = 1'000'000'000;
    cli::RateMeter m;
    CHECK(m.rate() == 0.0);
    m.add(0, 0);
    CHECK(m.rate() == 0.0);  // one sample: no rate yet
    // 1 MB a second for 5 s, sampled every 100 ms.
    for (int i = 1; i <= 50; ++i) m.add(i * kSec / 10, static_cast<std::uint64_t>(i) * 100'000);
    CHECK(m.rate() == doctest::Approx(1'000'000.0));
    // Then 10 MB a second for 2 s: after a second the meter shows only the
    // new rate (an average since the start would be 3.57 MB/s).
    std::uint64_t total = 5'000'000;
    for (int i = 1; i <= 20; ++i) {
      total += 1'000'000;
      m.add(5 * kSec + i * kSec / 10, total);
    }
    CHECK(m.rate() == doctest::Approx(10'000'000.0));
    // A stall: two seconds without a byte read as zero.
    m.add(9 * kSec, total);
    CHECK(m.rate() == 0.0);
    // Time or the total going back starts afresh.
    m.add(1 * kSec, 10);
    CHECK(m.rate() == 0.0);
    m.add(1 * kSec + kSec / 2, 1010);
    CHECK(m.rate() == doctest::Approx(2000.0));
    // While younger than a window: the rate since its first sample.
    cli::RateMeter young;
    young.add(0, 0);
    young.add(kSec / 4, 250);
    CHECK(young.rate() == doctest::Approx(1000.0));
  }

  TEST_CASE("progress: sizes and rates are written as git writes them") {
    CHECK(cli::human_bytes(0) == "0 bytes");
    CHECK(cli::human_bytes(1) == "1 byte");
    CHECK(cli::human_bytes(1023) == "1023 bytes");
    CHECK(cli::human_bytes(1536) == "1.50 KiB");
    CHECK(cli::human_bytes(12 * 1024 * 1024 + 1024 * 1024 / 100 * 99) == "12.98 MiB");
    CHECK(cli::human_bytes(3ull << 30) == "3.00 GiB");
    CHECK(cli::human_rate(5.0 * 1024 * 1024) == "5.00 MiB/s");
    CHECK(cli::human_rate(12) == "12 bytes/s");
    CHECK(cli::meter_title("enumerate") == "Enumerating objects");
    CHECK(cli::meter_title("count") == "Counting objects");
    CHECK(cli::meter_title("compress") == "Compressing objects");
    CHECK(cli::meter_title("upload") == "Writing objects");
    CHECK(cli::meter_title("remote").empty());
  }

  TEST_CASE(
      "progress: on a terminal, git's phases, the remote's progress as remote: lines, and a current Writing rate") {
    test::FixtureServer server;
    server.create_bare_repo("heavy");
    test::TempDir dir;
    const std::string source = dir.path() + "/source";
    make_heavy_repo(source, 6);
    // The upload is read at 3 MiB/s: Writing lasts seconds. libgit2's
    // packbuilder, whose phases count the same objects (git's own counts
    // are the next case's).
    constexpr long kRate = 3L * 1024 * 1024;
    server.command({{"cmd", "throttle"}, {"method", "POST"}, {"bytes_per_second", kRate}});
    const std::vector<std::string> argv = {COURIER_BINARY, "push",
                                           "--repo",       source,
                                           "--remote",     server.url("heavy"),
                                           "--ref",        "refs/heads/main",
                                           "--rev",        "HEAD",
                                           "--ca-file",    server.ca_file(),
                                           "--lane-dir",   dir.path() + "/lanes",
                                           "--no-journal", "--pack-engine",
                                           "libgit2"};
    PtyRun r = run_with_terminal_stderr(argv, test::cli_env());
    INFO("terminal:\n" << r.raw);
    REQUIRE(r.exit_code == cli::kExitOk);
    CHECK(test::git_ok({"--git-dir", server.repo_path("heavy"), "rev-parse", "refs/heads/main"}) ==
          test::git_ok({"rev-parse", "HEAD"}, source));

    // git's phases, each ended by its final line.
    CHECK(any_starts(r.segments, "Enumerating objects: "));
    CHECK(any_starts(r.segments, "Compressing objects: "));
    bool enumerated = false, compressed = false, written = false;
    for (const auto& s : r.segments) {
      const bool done = s.end == '\n' && s.text.find(", done.") != std::string::npos;
      enumerated = enumerated || (done && s.text.rfind("Enumerating objects: ", 0) == 0);
      compressed = compressed || (done && s.text.rfind("Compressing objects: 100% (", 0) == 0);
      written = written || (done && s.text.rfind("Writing objects: 100% (", 0) == 0);
      CHECK_MESSAGE(s.text.find("/0)") == std::string::npos, s.text);  // never a total of 0
    }
    CHECK(enumerated);
    CHECK(compressed);
    CHECK(written);
    // The phases end on their true counts: every object enumerated is one
    // the delta search went through.
    unsigned long enumerated_n = 0, compressed_n = 0;
    for (const auto& s : r.segments) {
      if (s.end != '\n') continue;
      (void)std::sscanf(s.text.c_str(), "Enumerating objects: %lu, done.", &enumerated_n);
      (void)std::sscanf(s.text.c_str(), "Compressing objects: 100%% (%lu/", &compressed_n);
    }
    CHECK(enumerated_n > 200);
    CHECK(enumerated_n == compressed_n);
    // The remote was asked for its progress (no `quiet`): index-pack's
    // meter, as remote: lines.
    CHECK(any_starts(r.segments, "remote: Resolving deltas"));

    // The Writing lines: redrawn in place, and the last one's rate is the
    // rate of the last second, as the lines' own counters and arrival times
    // measure it.
    std::vector<WritingLine> w;
    for (const auto& s : r.segments) {
      if (auto line = parse_writing(s)) w.push_back(*line);
    }
    REQUIRE(w.size() >= 3);
    const WritingLine& last = w.back();
    CHECK(last.final);
    const double lasted_s = sys::ns_to_ms(last.at - w.front().at) / 1000.0;
    REQUIRE_MESSAGE(lasted_s > 1.0, "Writing lasted only ", lasted_s, " s");
    std::size_t base = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (w[i].at <= last.at - 1'000'000'000) base = i;
    }
    const double span_s = sys::ns_to_ms(last.at - w[base].at) / 1000.0;
    REQUIRE(span_s > 0.5);
    const double measured = (last.done - w[base].done) / span_s;
    const double average = last.done / lasted_s;
    CHECK_MESSAGE(last.rate >= measured / 2, "reported ", last.rate, " B/s, measured ", measured, " B/s");
    CHECK_MESSAGE(last.rate <= measured * 2, "reported ", last.rate, " B/s, measured ", measured, " B/s");
    // At most one redraw per 100 ms (the first and the final line aside),
    // as git: counted, since two redraws may reach this reader in one read.
    CHECK_MESSAGE(static_cast<double>(w.size()) <= lasted_s * 10 + 3, w.size(), " redraws in ", lasted_s, " s");
    std::string screen;
    for (const auto& s : r.segments) {
      if (s.end == '\n') screen += s.text + "\n";
    }
    MESSAGE("the lines left on the terminal:\n" << screen);
    test::report("progress rate", "Writing lasted", lasted_s, "s");
    test::report("progress rate", "reported rate in the last Writing line", last.rate / 1048576.0, "MiB/s");
    test::report("progress rate", "rate over its last second, from the lines", measured / 1048576.0, "MiB/s");
    test::report("progress rate", "average since the first Writing line", average / 1048576.0, "MiB/s");
    test::report("progress rate", "server's read limit", kRate / 1048576.0, "MiB/s");
    test::report("progress rate", "Writing redraws", static_cast<double>(w.size()), "lines");
  }

  TEST_CASE("progress: the git engine shows git's Counting objects, and --no-progress turns every meter off") {
    test::FixtureServer server;
    server.create_bare_repo("engine");
    server.create_bare_repo("silent");
    test::TempDir dir;
    const std::string source = dir.path() + "/source";
    make_heavy_repo(source, 1);
    auto args = [&](const std::string& repo, std::vector<std::string> extra) {
      std::vector<std::string> a = {
          COURIER_BINARY,    "push",  "--repo", source,      "--remote",       server.url(repo), "--ref",
          "refs/heads/main", "--rev", "HEAD",   "--ca-file", server.ca_file(), "--lane-dir",     dir.path() + "/lanes",
          "--no-journal"};
      a.insert(a.end(), extra.begin(), extra.end());
      return a;
    };
    PtyRun git_engine = run_with_terminal_stderr(args("engine", {"--pack-engine", "git"}), test::cli_env());
    INFO("terminal:\n" << git_engine.raw);
    REQUIRE(git_engine.exit_code == cli::kExitOk);
    CHECK(any_starts(git_engine.segments, "Enumerating objects: "));
    CHECK(any_starts(git_engine.segments, "Counting objects: 100% ("));
    CHECK(any_starts(git_engine.segments, "Writing objects: 100% ("));
    // The streamed body's meter: no made-up total while it is unknown, and
    // its final line is the last Writing line (none redrawn after it).
    CHECK(git_engine.raw.find("/0 bytes)") == std::string::npos);
    std::string last_writing;
    for (const auto& s : git_engine.segments) {
      if (s.text.rfind("Writing objects: ", 0) == 0) last_writing = s.text;
    }
    CHECK_MESSAGE(last_writing.rfind("Writing objects: 100% (", 0) == 0, last_writing);

    PtyRun silent = run_with_terminal_stderr(args("silent", {"--no-progress"}), test::cli_env());
    REQUIRE(silent.exit_code == cli::kExitOk);
    CHECK_MESSAGE(silent.raw.find("objects:") == std::string::npos, silent.raw);
    CHECK_MESSAGE(silent.raw.find("remote: Resolving") == std::string::npos, silent.raw);
    CHECK_MESSAGE(silent.raw.find("delivered") != std::string::npos, silent.raw);
  }
}

}  // namespace integration_cli_progress
