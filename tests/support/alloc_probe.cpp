// alloc_probe.cpp — global operator new replacement for AllocProbe.
#include "alloc_probe.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_active{false};
std::atomic<std::size_t> g_largest{0};

void* allocate(std::size_t n) {
  if (g_active.load(std::memory_order_relaxed)) {
    std::size_t cur = g_largest.load(std::memory_order_relaxed);
    while (n > cur && !g_largest.compare_exchange_weak(cur, n)) {
    }
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace courier::test {
AllocProbe::AllocProbe() {
  g_largest = 0;
  g_active = true;
}
AllocProbe::~AllocProbe() { g_active = false; }
std::size_t AllocProbe::largest() const { return g_largest.load(); }
}  // namespace courier::test
