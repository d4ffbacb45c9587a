// main-unit.cpp — the doctest main of the unit binary (courier-unit-tests):
// process-free tests only (codecs, parsers, the URL rules, token binding,
// the verdict, the journal on temporary files). No child, no server, no lane
// directory: it runs in a few seconds (the journal's held-lock case waits
// kLockWaitMs, 2 s) and needs no leak check.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  return context.run();
}
