// main.cpp — the `git-courier` binary. The child entry comes first so that
// this same executable serves as its own `__delivery-push` child.
#include <cstring>

#include "child/delivery_push.hpp"
#include "cli/commands.hpp"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], courier::child::kSubcommand) == 0) {
    return courier::child::run_delivery_push(argc, argv);
  }
  return courier::cli::run(argc, argv);
}
