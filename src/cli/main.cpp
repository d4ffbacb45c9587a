// main.cpp — the `git-courier` binary. The child entry comes first so that
// this same executable serves as its own delivery child.
#include "cli/command_clock.hpp"
#include "cli/commands.hpp"
#include "courier/courier.hpp"
#include "sys/clock.hpp"

int main(int argc, char** argv) {
  if (auto code = courier::run_child_if_requested(argc, argv)) return *code;
  courier::cli::command_clock().main = courier::sys::mono_now_ns();
  return courier::cli::run(argc, argv);
}
