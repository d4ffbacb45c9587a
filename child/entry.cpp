// entry.cpp — run_child_if_requested: the one dispatch from a host's main()
// to the delivery child. The CLI, the test binaries and embedding hosts all
// call it, so the child's argv word is recognised in one place.
#include "child/delivery_push.hpp"
#include "courier/courier.hpp"

namespace courier {

std::optional<int> run_child_if_requested(int argc, char** argv) {
  if (wire::is_child_argv(argc, argv)) return child::run_delivery_push(argc, argv);
  return std::nullopt;
}

}  // namespace courier
