// main.cpp — the one doctest main for every unit and integration suite.
//
// Like a host program, it first lets its own executable serve as the
// delivery child, so supervisor tests that spawn /proc/self/exe run
// the real child code.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "courier/courier.hpp"

int main(int argc, char** argv) {
  if (auto code = courier::run_child_if_requested(argc, argv)) return *code;
  doctest::Context context(argc, argv);
  return context.run();
}
