// main.cpp — the `git-courier` binary. The child entry comes first so that
// this same executable serves as its own delivery child.
#include "cli/commands.hpp"
#include "courier/courier.hpp"

int main(int argc, char** argv) {
  if (auto code = courier::run_child_if_requested(argc, argv)) return *code;
  return courier::cli::run(argc, argv);
}
