// alloc_probe.hpp — records the largest single heap allocation made while a
// probe is active (global operator new is replaced in alloc_probe.cpp), so a
// test can prove that a reader refused a length without allocating it.
#pragma once

#include <cstddef>

namespace courier::test {

class AllocProbe {
 public:
  AllocProbe();
  ~AllocProbe();
  std::size_t largest() const;
};

}  // namespace courier::test
