// mutant_switch.cpp — the run-time switch of the mutation build: which
// mutant is on, read once before main() (sys/mutant_switch.hpp).
//
// Compiled only into the mutation build (COURIER_MUTANT_SCHEMATA), together
// with the generated table of mutant ids (mutant_ids.cpp, written by
// scripts/mutation-control next to the mutated copies).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sys/mutant_switch.hpp"

namespace courier::mutant {

// The generated table: kIds[i] is the id of mutant number i.
extern const char* const kIds[];
extern const int kCount;

namespace {

// -1: no mutant. Written once by the static initializer below, then only read.
int g_selected = -1;

// Reads the selector file found walking up from `dir`; "" when there is none.
std::string read_selector(std::string dir) {
  while (!dir.empty()) {
    const std::string path = (dir == "/" ? std::string() : dir) + "/" + kSelectorName;
    if (std::FILE* f = std::fopen(path.c_str(), "re")) {
      char buf[128] = {};
      const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
      std::fclose(f);
      std::string id(buf, n);
      while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
      return id.empty() ? std::string("none") : id;
    }
    if (dir == "/") break;
    const auto slash = dir.find_last_of('/');
    dir = slash == 0 || slash == std::string::npos ? std::string("/") : dir.substr(0, slash);
  }
  return {};
}

// TMPDIR as the session's leader was started with: "" if unreadable.
std::string session_tmpdir() {
  const pid_t sid = ::getsid(0);
  if (sid <= 0 || sid == ::getpid()) return {};
  std::FILE* f = std::fopen(("/proc/" + std::to_string(sid) + "/environ").c_str(), "re");
  if (!f) return {};
  std::string env;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0 && env.size() < (1u << 20);) env.append(buf, n);
  std::fclose(f);
  for (std::size_t at = 0; at < env.size();) {
    const std::size_t end = std::min(env.find('\0', at), env.size());
    if (env.compare(at, 7, "TMPDIR=") == 0) return env.substr(at + 7, end - at - 7);
    at = end + 1;
  }
  return {};
}

int select_at_start() {
  // The run's TMPDIR, else (a process a test started with a scrubbed
  // environment) the TMPDIR its session's leader, the test program that
  // mutation control started in a session of its own, was given.
  const char* tmp = std::getenv("TMPDIR");
  std::string id = tmp && *tmp == '/' ? read_selector(tmp) : std::string();
  if (id.empty()) {
    const std::string leader_tmp = session_tmpdir();
    if (!leader_tmp.empty() && leader_tmp[0] == '/') id = read_selector(leader_tmp);
  }
  if (id.empty() || id == "none") return -1;
  for (int i = 0; i < kCount; ++i) {
    if (std::strcmp(kIds[i], id.c_str()) == 0) return i;
  }
  // Loud, never silent: a run that names a mutant this build does not have
  // would otherwise pass as the unmutated tree.
  std::fprintf(stderr, "git-courier mutation build: the selector names '%s', which this build does not contain\n",
               id.c_str());
  std::_Exit(90);
}

// Before main(), so before any thread or spawn of this process.
[[maybe_unused]] const int g_loaded = (g_selected = select_at_start(), 0);

}  // namespace

bool on(int index) noexcept { return index == g_selected; }

}  // namespace courier::mutant
