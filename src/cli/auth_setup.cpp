// auth_setup.cpp — --auth for the CLI.
#include "cli/auth_setup.hpp"

namespace courier::cli {

Result<std::unique_ptr<AuthSetup>> AuthSetup::from_spec(const std::string& spec, const std::string& /*remote*/) {
  auto setup = std::make_unique<AuthSetup>();
  if (spec == "none") return setup;
  return fail(Errc::invalid_argument, "--auth " + spec + " is not supported by this build");
}

void AuthSetup::after(const Outcome& o) {
  if (!settle_) return;
  if (o.kind == OutcomeKind::delivered || o.kind == OutcomeKind::up_to_date) settle_(true);
  if (o.kind == OutcomeKind::auth_failed) settle_(false);
}

}  // namespace courier::cli
