// auth_setup.cpp — a credential spelling for one delivery: one minter, run
// by this process behind the MintGate (A2, A3).
#include "auth/auth_setup.hpp"

#include "auth/auth_spec.hpp"
#include "auth/minter.hpp"

namespace courier::auth {

Result<std::unique_ptr<AuthSetup>> AuthSetup::from_spec(const std::string& spec, const DeliveryRequest& request,
                                                        MonoNs deadline, const std::string& what) {
  auto setup = std::make_unique<AuthSetup>();
  auto factory = minter_factory(spec);
  if (!factory) return fail(Errc::invalid_argument, what + ": " + factory.error().message);
  MintContext context;
  context.remote = request.remote;
  context.ref = request.ref;
  context.oid = request.oid;
  context.deadline = deadline;  // no later than the turn's, which is fixed just after
  auto minter = (*factory)(context);
  if (!minter) return fail(Errc::invalid_argument, what + ": " + minter.error().message);
  if (!*minter) return setup;  // none
  std::shared_ptr<Minter> m = *minter;
  setup->mint_ = make_mint_callback(m, context, nullptr);
  setup->binds_payload_ = m->binds_payload();
  setup->settle_ = [m](bool accepted) { (void)m->settle(accepted); };
  return setup;
}

void AuthSetup::after(const Outcome& o) {
  if (!settle_) return;
  if (o.kind == OutcomeKind::delivered || o.kind == OutcomeKind::up_to_date) settle_(true);
  if (o.kind == OutcomeKind::auth_failed) settle_(false);
}

}  // namespace courier::auth
