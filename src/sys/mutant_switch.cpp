// mutant_switch.cpp — the run-time switch of the mutation build: which
// mutant is on, read once before main() (sys/mutant_switch.hpp).
//
// Compiled only into the mutation build (COURIER_MUTANT_SCHEMATA), together
// with the generated table of mutant ids (mutant_ids.cpp, written by
// scripts/mutation-control next to the mutated copies).
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

int select_at_start() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string id = read_selector(tmp && *tmp == '/' ? tmp : "/tmp");
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
