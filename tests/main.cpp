// main.cpp — the one doctest main for every unit and integration suite.
//
// Like a host program, it first lets its own executable serve as the
// `__delivery-push` child, so supervisor tests that spawn /proc/self/exe run
// the real child code.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstring>

#include "child/delivery_push.hpp"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], courier::child::kSubcommand) == 0) {
    return courier::child::run_delivery_push(argc, argv);
  }
  doctest::Context context(argc, argv);
  return context.run();
}
