// lifecycle.cpp — the lifecycle table (lifecycle.hpp): every move a
// delivery may make, as data.
#include "seat/lifecycle.hpp"

#include <array>
#include <vector>

#include "courier/words.hpp"

namespace courier::seat {

namespace {

using S = LifeState;
using E = LifeEvent;
using A = Actor;
using W = Writer;
using C = Claims;
using K = OutcomeKind;
using St = journal::Step;
constexpr StepOpt kNone = std::nullopt;

// A move that writes no outcome.
constexpr Transition move(S from, E e, S to, A a, StepOpt before = kNone, StepOpt after = kNone) {
  return Transition{from, e, to, a, before, after, W::nobody, K::interrupted, C::nothing};
}

// A move that writes the outcome.
constexpr Transition end(S from, E e, S to, A a, W w, K k, C c, StepOpt before = kNone, StepOpt after = kNone) {
  return Transition{from, e, to, a, before, after, w, k, c};
}

// Revoked while seated: the word is marked, the seat's worker ends it.
Transition seated_revoked(E ev, A actor) {
  return move(S::seated, ev, S::cancelled_seated, actor, St::revoke_requested);
}

// Before the claim: the mover of the claim word writes (queued, pending),
// or marks it and the seat's worker writes (seated). J1, J5: the
// revocation is durable before revoke() returns, whatever its cause.
#define COURIER_BEFORE_CLAIM(ev, actor)                                                                           \
  end(S::queued, ev, S::finished, actor, W::mover, K::cancelled_no_dispatch, C::none, St::revoke_requested),      \
      end(S::pending, ev, S::finished, actor, W::mover, K::cancelled_no_dispatch, C::none, St::revoke_requested), \
      seated_revoked(ev, actor)

// Live: the intent is durable before the kill (J1), except a lost lease's,
// whose kill waits for nothing (L1): its entry follows. Only the first
// revocation acts (there is no revocation out of stopping or
// answered_revoked): the id table reads the latest revocation's cause, so
// a second one (a shutdown after a caller's) would undo the caller's
// finality (J5).
#define COURIER_LIVE_REVOKE(ev, actor, before, after)                                                                  \
  move(S::claimed, ev, S::stopping, actor, before, after), move(S::dispatched, ev, S::stopping, actor, before, after), \
      move(S::advertised, ev, S::stopping, actor, before, after),                                                      \
      move(S::post_started, ev, S::stopping, actor, before, after),                                                    \
      move(S::answered, ev, S::answered_revoked, actor, before, after) /* the result stands; still stopped */

#define COURIER_CRASH(from) move(from, E::crash, S::crashed, A::process)

// Built at the first use, not before main(): the mutation build switches
// its rows at run time, by a switch read before main(). One move per
// (state, event) (tests/unit/lifecycle.cpp checks it).
// From the submission to the claim.
std::vector<Transition> before_claim_rows() {
  return {
      move(S::unsubmitted, E::submit, S::queued, A::caller, St::submitted),
      move(S::finished, E::submit, S::queued, A::caller, St::submitted),  // as the id table allows (J4)
      move(S::queued, E::lane_held, S::pending, A::lease_keeper),
      move(S::queued, E::seat_granted, S::seated, A::scheduler),
      move(S::pending, E::seat_granted, S::seated, A::scheduler),
      end(S::queued, E::refuse, S::finished, A::seat_worker, W::mover, K::lane_poisoned, C::none),
      COURIER_BEFORE_CLAIM(E::revoke_caller, A::caller),
      COURIER_BEFORE_CLAIM(E::revoke_authority, A::authority),
      COURIER_BEFORE_CLAIM(E::revoke_shutdown, A::executor),
      COURIER_BEFORE_CLAIM(E::lease_lost, A::lease_keeper),
      end(S::queued, E::deadline, S::finished, A::scheduler, W::mover, K::deadline_killed, C::none),
      end(S::pending, E::deadline, S::finished, A::scheduler, W::mover, K::deadline_killed, C::none),
      end(S::seated, E::deadline, S::finished, A::seat_worker, W::seat_worker, K::deadline_killed, C::none),
      end(S::cancelled_seated, E::seat_released, S::finished, A::seat_worker, W::seat_worker, K::cancelled_no_dispatch,
          C::none),
  };
}

// From the claim to the end, crashes and recovery.
std::vector<Transition> claimed_rows() {
  return {
      move(S::seated, E::claim, S::claimed, A::seat_worker, kNone, St::claimed),
      move(S::claimed, E::spawned, S::dispatched, A::child, kNone, St::dispatched),
      move(S::dispatched, E::advertised, S::advertised, A::child, kNone, St::advertised),
      move(S::advertised, E::post_cleared, S::post_started, A::seat_worker, St::post_started),
      move(S::post_started, E::result, S::answered, A::child, kNone, St::answered),
      end(S::answered, E::exit, S::finished, A::seat_worker, W::seat_worker, K::delivered, C::reported),
      end(S::answered_revoked, E::exit, S::finished, A::seat_worker, W::seat_worker, K::delivered, C::reported),
      end(S::claimed, E::exit, S::finished, A::seat_worker, W::seat_worker, K::spawn_failed, C::journal),
      end(S::dispatched, E::exit, S::finished, A::seat_worker, W::seat_worker, K::transport_failed, C::journal),
      end(S::advertised, E::exit, S::finished, A::seat_worker, W::seat_worker, K::transport_failed, C::journal),
      end(S::post_started, E::exit, S::finished, A::seat_worker, W::seat_worker, K::transport_failed, C::journal),
      COURIER_LIVE_REVOKE(E::revoke_caller, A::caller, St::revoke_requested, kNone),
      COURIER_LIVE_REVOKE(E::revoke_authority, A::authority, St::revoke_requested, kNone),
      COURIER_LIVE_REVOKE(E::revoke_shutdown, A::executor, St::revoke_requested, kNone),
      COURIER_LIVE_REVOKE(E::lease_lost, A::lease_keeper, kNone, St::revoke_requested),
      move(S::claimed, E::deadline, S::stopping, A::scheduler),
      move(S::dispatched, E::deadline, S::stopping, A::scheduler),
      move(S::advertised, E::deadline, S::stopping, A::scheduler),
      move(S::post_started, E::deadline, S::stopping, A::scheduler),
      end(S::stopping, E::stop_confirmed, S::finished, A::seat_worker, W::seat_worker, K::revoked, C::journal),
      end(S::stopping, E::stop_unconfirmed, S::unconfirmed, A::seat_worker, W::seat_worker, K::cancel_uncertain,
          C::journal),
      move(S::unconfirmed, E::recover, S::finished, A::recovery, kNone, St::stop_confirmed),
      COURIER_CRASH(S::queued),
      COURIER_CRASH(S::pending),
      COURIER_CRASH(S::seated),
      COURIER_CRASH(S::cancelled_seated),
      COURIER_CRASH(S::claimed),
      COURIER_CRASH(S::dispatched),
      COURIER_CRASH(S::advertised),
      COURIER_CRASH(S::post_started),
      COURIER_CRASH(S::answered),
      COURIER_CRASH(S::answered_revoked),
      COURIER_CRASH(S::stopping),
      end(S::crashed, E::recover, S::finished, A::recovery, W::recovery, K::interrupted, C::journal),
  };
}

const std::vector<Transition>& table() {
  static const std::vector<Transition> kTable = [] {
    auto rows = before_claim_rows();
    const auto rest = claimed_rows();
    rows.insert(rows.end(), rest.begin(), rest.end());
    return rows;
  }();
  return kTable;
}

#undef COURIER_BEFORE_CLAIM
#undef COURIER_LIVE_REVOKE
#undef COURIER_CRASH

const char* step_or_dash(const StepOpt& s) { return s ? journal::step_name(*s) : "-"; }

}  // namespace

std::span<const Transition> lifecycle_table() { return table(); }

std::optional<Transition> next(LifeState from, LifeEvent event) {
  for (const auto& t : table()) {
    if (t.from == from && t.event == event) return t;
  }
  return std::nullopt;
}

const char* life_state_name(LifeState s) { return enum_word(s).data(); }

const char* life_event_name(LifeEvent e) { return enum_word(e).data(); }

const char* actor_name(Actor a) {
  static constexpr std::array<const char*, 9> kNames = {
      "caller", "authority", "executor", "scheduler", "seat worker", "lease keeper", "child", "process", "recovery"};
  return kNames.at(static_cast<std::size_t>(a));
}

const char* writer_name(Writer w) {
  static constexpr std::array<const char*, 4> kNames = {"-", "the mover", "the seat's worker", "recovery"};
  return kNames.at(static_cast<std::size_t>(w));
}

std::string lifecycle_markdown() {
  static constexpr std::array<const char*, 4> kClaims = {"-", "none", "as journalled", "as reported"};
  std::string out =
      "| from | event | to | by | durable before | journalled after | outcome written by | outcome | remote effect |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& t : table()) {
    const bool writes = t.writer != Writer::nobody;
    out += std::string("| ") + life_state_name(t.from) + " | " + life_event_name(t.event) + " | " +
           life_state_name(t.to) + " | " + actor_name(t.actor) + " | " + step_or_dash(t.durable_before) + " | " +
           step_or_dash(t.durable_after) + " | " + writer_name(t.writer) + " | " +
           (writes ? outcome_name(t.outcome) : "-") + " | " + kClaims.at(static_cast<std::size_t>(t.claims)) + " |\n";
  }
  return out;
}

}  // namespace courier::seat
