// main-unit.cpp — the doctest main of the unit binary (courier-unit-tests):
// process-free tests only (codecs, parsers, the URL rules, token binding,
// the verdict). No child, no server, no lane directory: it runs in a
// fraction of a second and needs no leak check.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  return context.run();
}
