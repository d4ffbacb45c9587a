// failed_checks.hpp — how many assertions of the running test case have
// failed so far, from any thread (defined in main.cpp, where doctest's
// implementation is). A case that sweeps a long matrix stops at its first
// failure with it: the failure is already reported, and the rest of the
// matrix would only repeat it (a mutant would wait the whole sweep out).
#pragma once

namespace courier::test {

int failed_checks();

}  // namespace courier::test
