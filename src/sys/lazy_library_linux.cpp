// lazy_library_linux.cpp — dlopen and dlsym for the lazily bound libraries:
// load_shared_library (the explicit load, errors as values) and
// courier_lazy_resolve (what a stub reaches when its library was not loaded
// first). The stubs and their descriptors are generated at build time
// (cmake/lazy_stubs.cmake from lazy_stubs_x86_64.S.in) and linked into the
// shipped executable only; elsewhere the descriptors are absent (weak) and
// the libraries are linked directly.
#include "sys/lazy_library.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace courier::sys {

// The layout lazy_stubs_x86_64.S.in writes for each library.
struct LazyLibraryDescriptor {
  const char* soname;
  const char* names;  // NUL-terminated names one after the other; an empty name ends them
  std::uint64_t count;
  void** table;
  std::uint64_t loaded;  // written under load_lock only
};

}  // namespace courier::sys

extern "C" {
// Defined by the generated stubs in the shipped executable only.
extern courier::sys::LazyLibraryDescriptor courier_lazy_curl __attribute__((weak));
extern courier::sys::LazyLibraryDescriptor courier_lazy_git2 __attribute__((weak));
extern courier::sys::LazyLibraryDescriptor courier_lazy_sqlite3 __attribute__((weak));
extern courier::sys::LazyLibraryDescriptor courier_lazy_crypto __attribute__((weak));
extern courier::sys::LazyLibraryDescriptor courier_lazy_microhttpd __attribute__((weak));
extern courier::sys::LazyLibraryDescriptor courier_lazy_pq __attribute__((weak));
// Called by a stub's resolver (assembly), with every argument register saved.
void courier_lazy_resolve(courier::sys::LazyLibraryDescriptor* lib) noexcept;
}

namespace courier::sys {

namespace {

// One lock for every library: loads are rare and a second thread that
// reaches a stub while the first loads must wait for the filled table.
// (std::mutex is constant-initialised: no constructor runs at start.)
std::mutex load_lock;

LazyLibraryDescriptor* descriptor(SharedLibrary lib) {
  switch (lib) {
    case SharedLibrary::curl:
      return &courier_lazy_curl;
    case SharedLibrary::git2:
      return &courier_lazy_git2;
    case SharedLibrary::sqlite3:
      return &courier_lazy_sqlite3;
    case SharedLibrary::crypto:
      return &courier_lazy_crypto;
    case SharedLibrary::microhttpd:
      return &courier_lazy_microhttpd;
    case SharedLibrary::pq:
      return &courier_lazy_pq;
  }
  return nullptr;
}

// The dlopen handle of a library being bound: closed on every way out but
// the one that binds it (a failed load leaves nothing mapped behind), and
// let go of on success, when the table points into the library and the
// process keeps it for its whole life.
class OpenLibrary {
 public:
  explicit OpenLibrary(void* handle) : handle_(handle) {}
  OpenLibrary(const OpenLibrary&) = delete;
  OpenLibrary& operator=(const OpenLibrary&) = delete;
  ~OpenLibrary() {
    if (handle_ != nullptr) ::dlclose(handle_);
  }
  void* get() const { return handle_; }
  void keep_for_process() { handle_ = nullptr; }

 private:
  void* handle_;
};

}  // namespace

Result<std::vector<void*>> bind_library(const char* soname, const char* names, std::size_t count) {
  OpenLibrary lib(::dlopen(soname, RTLD_LAZY | RTLD_LOCAL));
  if (lib.get() == nullptr) {
    const char* why = ::dlerror();
    return fail(Errc::os_error, std::string("cannot load ") + soname + ": " + (why ? why : "unknown reason"));
  }
  std::vector<void*> slots;
  slots.reserve(count);
  for (const char* name = names; *name != '\0'; name += std::strlen(name) + 1) {
    void* fn = ::dlsym(lib.get(), name);
    if (fn == nullptr) {
      return fail(Errc::os_error, std::string("cannot load ") + soname + ": it has no function " + name +
                                      " (an older version than this build was made for?)");
    }
    slots.push_back(fn);
  }
  if (slots.size() != count) {
    return fail(Errc::os_error, std::string("cannot load ") + soname + ": the stub table is inconsistent");
  }
  lib.keep_for_process();
  return slots;
}

namespace {

// Opens the library by the SONAME the build linked against and fills its
// whole table; on any failure the table is left as it was (every slot still
// at its resolver), so nothing half-bound is ever called.
Result<void> load_locked(LazyLibraryDescriptor& lib) {
  if (lib.loaded != 0) return {};
  auto slots = bind_library(lib.soname, lib.names, lib.count);
  if (!slots) return tl::unexpected(slots.error());
  for (std::size_t i = 0; i < slots->size(); ++i) lib.table[i] = (*slots)[i];
  lib.loaded = 1;
  return {};
}

}  // namespace

Result<void> load_shared_library(SharedLibrary lib) {
  LazyLibraryDescriptor* d = descriptor(lib);
  if (d == nullptr) return {};  // linked directly
  std::lock_guard<std::mutex> hold(load_lock);
  return load_locked(*d);
}

Result<void> load_shared_libraries(std::initializer_list<SharedLibrary> libs) {
  for (SharedLibrary lib : libs) {
    if (auto r = load_shared_library(lib); !r) return r;
  }
  return {};
}

}  // namespace courier::sys

void courier_lazy_resolve(courier::sys::LazyLibraryDescriptor* lib) noexcept {
  std::lock_guard<std::mutex> hold(courier::sys::load_lock);
  auto r = courier::sys::load_locked(*lib);
  if (r) return;
  // A function was called before its library was asked for and the library
  // cannot be loaded: there is no caller to hand an error to, so say it and
  // exit as the dynamic loader would have at start.
  std::fflush(stdout);
  std::fprintf(stderr, "git-courier: %s\n", r.error().message.c_str());
  std::_Exit(courier::sys::kExitLibraryMissing);
}
