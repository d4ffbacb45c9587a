// auth_setup.cpp — a credential spelling for one delivery: one minter, run
// by this process behind the MintGate (A2, A3).
#include "auth/auth_setup.hpp"

#include "auth/auth_spec.hpp"
#include "auth/minter.hpp"

namespace courier::auth {

Result<std::unique_ptr<AuthSetup>> AuthSetup::from_spec(const std::string& spec, const DeliveryRequest& request,
                                                        MonoNs deadline, const std::string& what,
                                                        std::function<void(const std::string&)> on_note) {
  auto setup = std::make_unique<AuthSetup>();
  FactoryOptions options;
  options.credential.untrusted_repo_falls_back = static_cast<bool>(on_note);
  options.credential.on_note = std::move(on_note);
  auto factory = minter_factory(spec, std::move(options));
  if (!factory) return fail(Errc::invalid_argument, what + ": " + factory.error().message);
  MintContext context;
  context.remote = request.remote;
  context.repo = request.repo;
  // A delivery of several refs names its first update in the token's
  // `ref` and `oid` claims; every ref and id it changes is in the POST's
  // body, which the `ph` claim binds (docs/auth.md).
  const bool several = request.ref.empty() && !request.updates.empty();
  context.ref = several ? request.updates.front().ref : request.ref;
  context.oid = several ? request.updates.front().oid : request.oid;
  context.deadline = deadline;  // no later than the turn's, which is fixed just after
  auto minter = (*factory)(context);
  if (!minter) return fail(Errc::invalid_argument, what + ": " + minter.error().message);
  if (!*minter) return setup;  // none
  std::shared_ptr<Minter> m = *minter;
  setup->mint_ = make_mint_callback(m, context, nullptr);
  setup->binds_payload_ = m->binds_payload();
  setup->after_challenge_ = m->after_challenge();
  setup->settle_ = [m](bool accepted) { (void)m->settle(accepted); };
  return setup;
}

namespace {

// The status a leg's refusal names ("... the server answered 401: ..."),
// or 0: the child's reason is the only place the outcome keeps it.
int answered_status(const std::string& reason) {
  constexpr std::string_view kAnswered = "the server answered ";
  const auto at = reason.find(kAnswered);
  if (at == std::string::npos || reason.size() < at + kAnswered.size() + 3) return 0;
  const std::string digits = reason.substr(at + kAnswered.size(), 3);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoi(digits);
}

}  // namespace

void AuthSetup::after(const Outcome& o) {
  if (!settle_) return;
  if (o.kind == OutcomeKind::delivered || o.kind == OutcomeKind::up_to_date) settle_(true);
  // git rejects a credential only on 401: a 403 accepted who you are.
  if (o.kind == OutcomeKind::auth_failed && answered_status(o.reason) == 401) settle_(false);
}

}  // namespace courier::auth
