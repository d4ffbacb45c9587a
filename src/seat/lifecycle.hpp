// lifecycle.hpp — a delivery's lifecycle as one pure table (S1, S5, J1,
// J2, J4, J5): its states, the events that move it, and for each move who
// may cause it, what the journal must hold durably before and after it,
// and who writes the outcome.
//
// Data, not code: the executor's claim word, docs/design.md's table and the
// model checker in the unit tests (tests/unit/lifecycle.cpp) all read the
// same rows, so a move nobody listed is a move nobody may make.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "courier/outcome.hpp"
#include "journal/journal.hpp"

namespace courier::seat {

#define COURIER_LIFE_STATE_LIST(X)                                                       \
  X(unsubmitted)      /* nothing journalled yet */                                       \
  X(queued)           /* submitted (durable), waiting for its lane's seat */             \
  X(pending)          /* the lane is held elsewhere (a lease): waiting, no seat */       \
  X(seated)           /* a worker holds the seat and has not claimed yet */              \
  X(cancelled_seated) /* revoked while seated: the seat's worker ends it */              \
  X(claimed)          /* the dispatch claim won: a child may exist from here */          \
  X(dispatched)       /* the child exists */                                             \
  X(advertised)       /* the remote's old id was read */                                 \
  X(post_started)     /* the POST was cleared to begin (durable first) */                \
  X(answered)         /* the report was read: the child's result decides */              \
  X(answered_revoked) /* revoked after the report: the result stands, the child stops */ \
  X(stopping)         /* a revocation, deadline or lost lease won: the kill runs */      \
  X(finished)         /* the outcome is written; the seat is released */                 \
  X(unconfirmed)      /* the outcome is written, the stop unconfirmed: seat retained */  \
  X(crashed)          /* the process died with this delivery unfinished */

COURIER_WORD_ENUM(LifeState, COURIER_LIFE_STATE_LIST);

#define COURIER_LIFE_EVENT_LIST(X)                                                 \
  X(submit)           /* the caller submits the id (the id table allows a run) */  \
  X(lane_held)        /* the lane's lease is held by another host */               \
  X(seat_granted)     /* the scheduler gives it the lane's seat */                 \
  X(refuse)           /* a worker refuses it before its claim (a poisoned lane) */ \
  X(claim)            /* the seat's worker takes the dispatch claim */             \
  X(revoke_caller)    /* revoke() by the host or user */                           \
  X(revoke_authority) /* the host's authority took the turn back */                \
  X(revoke_shutdown)  /* the executor stops (a drain) */                           \
  X(lease_lost)       /* the lane's lease was not renewed in time */               \
  X(deadline)         /* the deadline came */                                      \
  X(spawned)          /* the child exists */                                       \
  X(advertised)       /* the child read the remote's advertisement */              \
  X(post_cleared)     /* the child is told it may POST */                          \
  X(result)           /* the child's report-status */                              \
  X(exit)             /* the child exited (its stop confirmed) */                  \
  X(seat_released)    /* the seat's worker released the seat */                    \
  X(stop_confirmed)   /* the kill's stop was confirmed */                          \
  X(stop_unconfirmed) /* the kill's stop could not be confirmed */                 \
  X(crash)            /* the process dies */                                       \
  X(recover)          /* recovery finishes what the dead process left */

COURIER_WORD_ENUM(LifeEvent, COURIER_LIFE_EVENT_LIST);

// Who causes a move.
enum class Actor { caller, authority, executor, scheduler, seat_worker, lease_keeper, child, process, recovery };

// Who writes the outcome on this move (J5: exactly one writer per attempt).
enum class Writer {
  nobody,       // the move writes no outcome
  mover,        // whoever moved the claim word out of queued
  seat_worker,  // the seat's worker, after it released the seat
  recovery,     // recovery, for a dead process
};

// The remote effect the outcome written on this move claims (J2).
enum class Claims {
  nothing,   // no outcome written here
  none,      // nothing the remote could apply was sent
  journal,   // possible when post_started is journalled, else none
  reported,  // what the report said (applied)
};

// A journal step, or none.
using StepOpt = std::optional<journal::Step>;

struct Transition {
  LifeState from;
  LifeEvent event;
  LifeState to;
  Actor actor;
  StepOpt durable_before;  // synced before the move has any effect
  StepOpt durable_after;   // journalled once the move is made
  Writer writer;
  OutcomeKind outcome;  // when writer != nobody
  Claims claims;
};

// Every move of the lifecycle, in the table's order.
std::span<const Transition> lifecycle_table();

// The move `event` makes from `from`, or nullopt: not a move of the table.
std::optional<Transition> next(LifeState from, LifeEvent event);

const char* life_state_name(LifeState s);
const char* life_event_name(LifeEvent e);
const char* actor_name(Actor a);
const char* writer_name(Writer w);

// The table as docs/design.md shows it: a Markdown table, one row a move.
std::string lifecycle_markdown();

// ---- the claim word: the executor's one atomic word of the same machine --

// The dispatch claim (S5) and the one writer of the outcome (J5). Values of
// an std::atomic<int> in the executor.
enum ClaimWord : int {
  kQueued,
  kSeated,
  kClaimed,
  kCancelled,
  kCancelledSeated,
  kExpired,
  kRefused,
  kStopping,
  kAnswered
};

// One compare-and-swap (or plain store at admission) the executor makes on
// the claim word: from, to, who makes it, who then writes the outcome.
struct ClaimMove {
  ClaimWord from;
  ClaimWord to;
  Actor actor;
  Writer writer;
};

// Out of queued the mover writes (the revoker, the scheduler at the
// deadline, the refusing worker); out of seated the seat's worker writes,
// after releasing the seat (a revocation there only marks the word); out of
// claimed one compare-and-swap decides between the child's result
// (answered) and a revocation (stopping), and the seat's worker writes.
// Admission's plain stores (queued or refused) come before any other thread
// sees the word and are not moves.
inline constexpr ClaimMove kClaimMoves[] = {
    {kQueued, kSeated, Actor::scheduler, Writer::seat_worker},
    {kQueued, kCancelled, Actor::caller, Writer::mover},
    {kQueued, kExpired, Actor::scheduler, Writer::mover},
    {kQueued, kRefused, Actor::seat_worker, Writer::mover},
    {kSeated, kClaimed, Actor::seat_worker, Writer::seat_worker},
    {kSeated, kExpired, Actor::seat_worker, Writer::seat_worker},
    {kSeated, kCancelledSeated, Actor::caller, Writer::seat_worker},
    {kClaimed, kStopping, Actor::caller, Writer::seat_worker},
    {kClaimed, kAnswered, Actor::child, Writer::seat_worker},
};

// Whether the executor may move the claim word from `from` to `to`.
constexpr bool claim_move_allowed(ClaimWord from, ClaimWord to) {
  for (const auto& m : kClaimMoves) {
    if (m.from == from && m.to == to) return true;
  }
  return false;
}

}  // namespace courier::seat
