// cheap-start.cpp — the shipped binary starts without the libraries it
// does not need (docs/design.md "A cheap start"): --version, --help and a
// usage error load none of libcurl, libgit2, libsqlite3 and libcrypto; a
// command loads the ones it uses when it uses them. What is loaded is read
// from the dynamic loader's own trace (LD_DEBUG=files), which names every
// shared object it maps. That a push with this binary as its child still
// delivers is proven by the e2e suite ("the CLI delivers, updates, reports
// up to date and rejected against nginx over TLS, with its exit codes") and
// the auth suite, whose children are this binary.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "journal/journal.hpp"
#include "support.hpp"
#include "sys/lazy_library.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace integration_cheap_start {

using namespace courier;

namespace {

// Where git-courier links the libraries directly (another architecture, the
// sanitizer build, COURIER_LAZY_LIBS=OFF) there is nothing to prove.
constexpr bool kLazy = COURIER_LAZY_LIBS != 0;

constexpr const char* kLibraries[] = {"libcurl.so", "libgit2.so", "libsqlite3.so", "libcrypto.so"};

// The shared objects the loader mapped while running argv, as its trace
// lists them ("file=libcurl.so.4 [0];  needed by ..." or "... dynamically
// loaded by ..."), one name a line.
struct Traced {
  test::RunResult run;
  std::string loaded;
};

Traced traced(const std::vector<std::string>& argv) {
  std::vector<std::string> env = test::cli_env();
  env.emplace_back("LD_DEBUG=files");
  Traced t{test::run(argv, {}, test::Stdin::bytes, env), {}};
  std::string::size_type at = 0;
  while ((at = t.run.err.find("file=", at)) != std::string::npos) {
    at += 5;
    const auto end = t.run.err.find_first_of(" \t\n", at);
    t.loaded += "\n" + t.run.err.substr(at, end - at);
  }
  t.loaded += "\n";
  return t;
}

bool loaded(const Traced& t, const std::string& library) { return t.loaded.find("\n" + library) != std::string::npos; }

}  // namespace

TEST_SUITE("cheap-start") {
  TEST_CASE("X-START1: --version, --help and a usage error load none of libcurl, libgit2, libsqlite3 and libcrypto" *
            doctest::skip(!kLazy)) {
    for (std::vector<std::string> argv : {std::vector<std::string>{COURIER_BINARY, "--version"},
                                          {COURIER_BINARY, "--help"},
                                          {COURIER_BINARY, "push", "--remote"}}) {
      CAPTURE(argv.back());
      Traced t = traced(argv);
      CAPTURE(t.loaded);
      CHECK(t.run.exit_code == (argv.back() == "--remote" ? 2 : 0));
      // The trace is live: libc is in it, so an absent library is absent.
      REQUIRE(loaded(t, "libc.so"));
      for (const char* library : kLibraries) {
        CHECK_MESSAGE(!loaded(t, library), (std::string(library) + " was loaded at start"));
      }
    }
  }

  TEST_CASE("X-START1: --version names the libgit2 and libcurl versions it was built with, without loading them" *
            doctest::skip(!kLazy)) {
    Traced t = traced({COURIER_BINARY, "--version"});
    CHECK(t.run.exit_code == 0);
    CHECK(t.run.out.find("built with libgit2 ") != std::string::npos);
    CHECK(t.run.out.find(", libcurl ") != std::string::npos);
    CHECK_MESSAGE(!loaded(t, "libgit2.so"), std::string("libgit2 was loaded for --version"));
  }

  TEST_CASE("X-START1: keygen loads libcrypto when it signs, and neither libcurl nor libgit2 nor libsqlite3" *
            doctest::skip(!kLazy)) {
    test::TempDir dir;
    const std::string key = dir.path() + "/key.pem";
    Traced t = traced({COURIER_BINARY, "keygen", "--out", key});
    CAPTURE(t.run.err.substr(0, 2000));
    CHECK(t.run.exit_code == 0);
    CHECK(t.run.out.find("public key (Ed25519, base64url): ") != std::string::npos);
    CHECK_MESSAGE(loaded(t, "libcrypto.so"), std::string("keygen ran without libcrypto loaded"));
    for (const char* library : {"libcurl.so", "libgit2.so", "libsqlite3.so"}) {
      CHECK_MESSAGE(!loaded(t, library), (std::string(library) + " was loaded for keygen"));
    }
  }

  TEST_CASE("X-START1: log reads the journal with libsqlite3 loaded, and neither libcurl nor libgit2" *
            doctest::skip(!kLazy)) {
    test::TempDir dir;
    // log never creates a journal (X-RO1): one is made here to be read.
    REQUIRE(journal::open_sqlite(dir.path() + "/journal.sqlite").has_value());
    Traced t = traced({COURIER_BINARY, "log", "--journal", dir.path() + "/journal.sqlite"});
    CAPTURE(t.run.err.substr(0, 2000));
    CHECK(t.run.exit_code == 0);
    CHECK_MESSAGE(loaded(t, "libsqlite3.so"), std::string("log ran without libsqlite3 loaded"));
    for (const char* library : {"libcurl.so", "libgit2.so"}) {
      CHECK_MESSAGE(!loaded(t, library), (std::string(library) + " was loaded for log"));
    }
  }

  TEST_CASE("X-START1: a libsqlite3 that lacks a function the journal calls is named in log's error, exit 3" *
            doctest::skip(!kLazy)) {
    // A real shared object under the library's SONAME, first on the search
    // path, that is not SQLite: loading it works, binding it cannot.
    test::TempDir dir;
    std::filesystem::create_directory(dir.path() + "/lib");
    std::filesystem::copy_file("/lib/x86_64-linux-gnu/libm.so.6", dir.path() + "/lib/libsqlite3.so.0");
    std::vector<std::string> env = test::cli_env();
    env.push_back("LD_LIBRARY_PATH=" + dir.path() + "/lib");
    auto r =
        test::run({COURIER_BINARY, "log", "--journal", dir.path() + "/journal.sqlite"}, {}, test::Stdin::bytes, env);
    CAPTURE(r.err);
    CHECK(r.signal == 0);
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("git-courier: cannot load libsqlite3.so.0: it has no function sqlite3_") != std::string::npos);
  }

  TEST_CASE("X-START1: a library that cannot be bound is closed again; a failed load leaves nothing mapped") {
    // glibc's smallest library: it needs libc only, and nothing here loads it.
    constexpr const char* kProbe = "libBrokenLocale.so.1";
    REQUIRE_MESSAGE(::dlopen(kProbe, RTLD_LAZY | RTLD_NOLOAD) == nullptr, kProbe << " is loaded before the test");
    struct Try {
      const char* what;
      const char* names;
      std::size_t count;
      const char* error;
    };
    // A function it lacks; and every function found, but not as many as the
    // stub table has slots (memcpy is found through libc, its dependency).
    const Try tries[] = {{"a missing function", "courier_no_such_function\0", 1, "it has no function courier_no_such_"},
                         {"a table of another size", "memcpy\0", 2, "the stub table is inconsistent"}};
    for (const Try& t : tries) {
      const std::string what = t.what;
      CAPTURE(what);
      auto bound = sys::bind_library(kProbe, t.names, t.count);
      REQUIRE_FALSE(bound.has_value());
      CHECK(bound.error().message.find(t.error) != std::string::npos);
      void* left = ::dlopen(kProbe, RTLD_LAZY | RTLD_NOLOAD);
      if (left != nullptr) {
        ::dlclose(left);  // the reference just taken, then the one the failed load kept
        ::dlclose(left);
      }
      CHECK_MESSAGE(left == nullptr, "the failed load left " << kProbe << " mapped");
    }
  }
}

}  // namespace integration_cheap_start
