// lifecycle.cpp — S1, S5, J1, J2, J4, J5: the lifecycle table
// (src/seat/lifecycle.*) explored. A small explicit-state model checker runs
// every order of the table's events for two deliveries on one lane and one
// on another — submit, seat, claim, revocation by each cause, deadline, a
// lost lease, the child's steps, one crash at any step (also between a
// move's durable entry and the move), recovery, and the same id submitted
// again as the id table (seat::same_id_again, over the journal the model
// wrote) allows — and checks the rules in every reachable state. The table
// in docs/design.md is the one in the code.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "journal/journal.hpp"
#include "seat/admission.hpp"
#include "seat/lifecycle.hpp"
#include "support.hpp"

// This file's own names: the test programs are compiled a few files at a
// time (CMakeLists.txt, unity batches), and a name here must not meet
// another file's.
namespace unit_lifecycle {

using namespace courier;
using journal::Step;
using seat::LifeEvent;
using seat::LifeState;
using seat::Transition;

namespace {

constexpr int kDeliveries = 3;
// The first delivery's id is submitted again at most once (after a crash
// or an end the id table runs again); the others' are not: that bounds
// the exploration to seconds.
constexpr int kMaxAttempts[kDeliveries] = {2, 1, 1};
constexpr int kMaxCrashes = 1;
constexpr int kDeadlineCause = 4;  // stop_cause: a deadline, not a revocation
const std::string kOld(40, '1');
// Past this many states the exploration stops and fails: the bound above
// was lost, not the rules.
constexpr std::size_t kMaxStates = 4'000'000;

// The others' revocations are the caller's (and the deadline's) only: the
// first delivery takes every cause.
bool explored(int delivery, LifeEvent e) {
  if (delivery == 0) return true;
  return e != LifeEvent::revoke_authority && e != LifeEvent::revoke_shutdown && e != LifeEvent::lease_lost &&
         e != LifeEvent::lane_held;
}

// One durable journal entry, as compact as the checker keeps it.
struct Mark {
  std::uint8_t step = 0;
  std::uint8_t attempt = 0;
  std::uint8_t cause = 0;   // revoke_requested: its cause; finished: revoked_by + 1 (0: none)
  std::uint8_t flag = 0;    // revoke_requested: claimed; finished: the outcome kind
  std::uint8_t effect = 0;  // finished: the remote effect it claims
};

struct Delivery {
  LifeState st = LifeState::unsubmitted;
  std::uint8_t lane = 0;
  std::uint8_t attempt = 0;
  std::uint8_t posts_attempt = 0;  // POSTs this attempt sent
  std::uint8_t posts_total = 0;
  bool answered = false;        // a report was read this attempt
  bool posted_earlier = false;  // an earlier attempt sent a POST
  bool cas = false;             // this attempt runs as the id table's compare-and-swap
  bool child = false;           // a child may live (spawned, its stop not yet confirmed)
  std::int8_t stop_cause = -1;
  std::vector<Mark> journal;
};

struct World {
  std::array<Delivery, kDeliveries> d;
  std::array<std::int8_t, 2> seat = {-1, -1};
  bool crashed = false;
  std::uint8_t crashes = 0;
};

std::string key_of(const World& w) {
  std::string k;
  for (const auto& d : w.d) {
    k += {static_cast<char>(d.st),
          static_cast<char>(d.attempt),
          static_cast<char>(d.posts_attempt),
          static_cast<char>(d.posts_total),
          static_cast<char>(d.answered),
          static_cast<char>(d.posted_earlier),
          static_cast<char>(d.cas),
          static_cast<char>(d.stop_cause),
          static_cast<char>(d.child),
          static_cast<char>(d.journal.size())};
    for (const auto& m : d.journal) k += {char(m.step), char(m.attempt), char(m.cause), char(m.flag), char(m.effect)};
  }
  k += {char(w.seat[0]), char(w.seat[1]), char(w.crashed), char(w.crashes)};
  return k;
}

// The move that led to a state, kept compactly for each state and told in
// words only when a violation shows the path to it: the checker visits
// millions of moves, and most lead to a state already seen.
struct Label {
  enum class Kind : std::uint8_t { start, event, crash, crash_after_entry, crash_before_entry, recover };
  Kind kind = Kind::start;
  std::uint8_t delivery = 0;
  LifeEvent event = LifeEvent::submit;
  Step step = Step::submitted;
};

std::string text_of(const Label& l) {
  const std::string who = "d" + std::to_string(l.delivery);
  switch (l.kind) {
    case Label::Kind::start:
      return "start";
    case Label::Kind::event:
      return who + ":" + seat::life_event_name(l.event);
    case Label::Kind::crash:
      return "crash";
    case Label::Kind::crash_after_entry:
      return "crash(" + who + " after " + journal::step_name(l.step) + ")";
    case Label::Kind::crash_before_entry:
      return "crash(" + who + " after " + seat::life_event_name(l.event) + ", before " + journal::step_name(l.step) +
             ")";
    case Label::Kind::recover:
      return "recover";
  }
  return "?";
}

bool in_attempt(const Delivery& d, Step s) {
  for (const auto& m : d.journal) {
    if (m.attempt == d.attempt && m.step == static_cast<std::uint8_t>(s)) return true;
  }
  return false;
}

// The journal's record of a delivery, as the stores would give it back.
journal::Record record_of(const Delivery& d) {
  journal::Record r;
  r.submission.id = "model";
  r.submission.attempt = d.attempt;
  for (const auto& m : d.journal) {
    const auto step = static_cast<Step>(m.step);
    std::string detail = "{}";
    if (step == Step::revoke_requested) {
      detail = std::string("{\"cause\":\"") + revoke_cause_name(static_cast<RevokeCause>(m.cause)) +
               "\",\"claimed\":" + (m.flag ? "true" : "false") + "}";
    } else if (step == Step::advertised || step == Step::post_started) {
      detail = "{\"old_oid\":\"" + kOld + "\"}";
    } else if (step == Step::finished) {
      Outcome o;
      o.kind = static_cast<OutcomeKind>(m.flag);
      o.remote_effect = static_cast<RemoteEffect>(m.effect);
      if (m.cause != 0) o.revoked_by = static_cast<RevokeCause>(m.cause - 1);
      detail = journal::outcome_detail(o);
    }
    r.entries.push_back(journal::Entry{step, m.attempt, 1, detail});
  }
  r.finished = in_attempt(d, Step::finished);
  return r;
}

std::optional<RevokeCause> cause_of(LifeEvent e) {
  switch (e) {
    case LifeEvent::revoke_caller:
      return RevokeCause::caller;
    case LifeEvent::revoke_authority:
      return RevokeCause::authority;
    case LifeEvent::revoke_shutdown:
      return RevokeCause::shutdown;
    case LifeEvent::lease_lost:
      return RevokeCause::lease_lost;
    default:
      return std::nullopt;
  }
}

bool claimed_state(LifeState s) {
  return s == LifeState::claimed || s == LifeState::dispatched || s == LifeState::advertised ||
         s == LifeState::post_started || s == LifeState::answered || s == LifeState::answered_revoked ||
         s == LifeState::stopping;
}

bool holds_seat(LifeState s) {
  return s == LifeState::seated || s == LifeState::cancelled_seated || claimed_state(s) || s == LifeState::unconfirmed;
}

bool final_cancellation_journalled(const Delivery& d) {
  for (const auto& m : d.journal) {
    if (m.step == static_cast<std::uint8_t>(Step::revoke_requested) &&
        revocation_is_final(static_cast<RevokeCause>(m.cause))) {
      return true;
    }
  }
  return false;
}

class Checker {
 public:
  std::size_t states() const { return seen_.size(); }
  std::size_t transitions() const { return transitions_; }
  const std::string& violation() const { return violation_; }

  void run() {
    World start;
    start.d[2].lane = 1;
    visit(std::move(start), -1, Label{});
    while (!frontier_.empty() && violation_.empty()) {
      if (seen_.size() > kMaxStates) {
        violation_ = "the exploration passed " + std::to_string(kMaxStates) + " states: its bound is lost";
        return;
      }
      const auto [w, at] = std::move(frontier_.front());
      frontier_.pop_front();
      expand(w, at);
    }
  }

 private:
  std::unordered_map<std::string, int> seen_;
  std::vector<std::pair<int, Label>> parent_;  // per state: its parent and the move that led here
  // The id table's answer (seat::same_id_again) per journal a delivery has
  // when it is submitted again: a function of that journal alone, asked
  // once for each distinct one rather than at every such move.
  std::unordered_map<std::string, seat::SameIdAgain> id_table_;
  std::deque<std::pair<World, int>> frontier_;
  std::size_t transitions_ = 0;
  std::string violation_;

  void fail(int at, const std::string& what) {
    if (!violation_.empty()) return;
    violation_ = what + "\n  after:";
    std::vector<std::string> path;
    for (int i = at; i >= 0; i = parent_[static_cast<std::size_t>(i)].first) {
      path.push_back(text_of(parent_[static_cast<std::size_t>(i)].second));
    }
    for (auto it = path.rbegin(); it != path.rend(); ++it) violation_ += " " + *it;
  }

  // A delivery at its last end, never submitted again, has no future: what
  // led there was checked on the way, so its history is forgotten and the
  // ends it could reach count as one state.
  static void forget_ended(World& w) {
    for (int i = 0; i < kDeliveries; ++i) {
      auto& d = w.d[static_cast<std::size_t>(i)];
      if (d.st != LifeState::finished || d.attempt < kMaxAttempts[i] || d.child) continue;
      const auto lane = d.lane;
      const auto attempt = d.attempt;
      d = Delivery{};
      d.st = LifeState::finished;
      d.lane = lane;
      d.attempt = attempt;
    }
  }

  void visit(World w, int parent, const Label& label) {
    ++transitions_;
    forget_ended(w);
    const auto [it, fresh] = seen_.emplace(key_of(w), static_cast<int>(parent_.size()));
    if (!fresh) return;
    parent_.emplace_back(parent, label);
    const int at = it->second;
    check_state(w, at);
    frontier_.emplace_back(std::move(w), at);
  }

  // S1: at most one delivery live on a lane (claim to confirmed stop, a
  // child that may live counted too), and it holds the lane's seat.
  void check_state(const World& w, int at) {
    for (int lane = 0; lane < 2; ++lane) {
      int live = 0;
      for (int i = 0; i < kDeliveries; ++i) {
        const auto& d = w.d[static_cast<std::size_t>(i)];
        if (d.lane != lane || !(claimed_state(d.st) || d.st == LifeState::unconfirmed || d.child)) continue;
        ++live;
        // A dead process's child holds no seat: nothing runs until recovery.
        if (d.st != LifeState::crashed && w.seat[static_cast<std::size_t>(lane)] != i) {
          fail(at, "S1: a live delivery does not hold its lane's seat");
        }
      }
      if (live > 1) fail(at, "S1: two deliveries live on one lane");
    }
  }

  void expand(const World& w, int at) {
    for (int i = 0; i < kDeliveries && !w.crashed; ++i) {
      for (int e = 0; e <= static_cast<int>(LifeEvent::recover); ++e) {
        const auto ev = static_cast<LifeEvent>(e);
        if (ev == LifeEvent::crash || ev == LifeEvent::recover || !explored(i, ev)) continue;
        const auto t = seat::next(w.d[static_cast<std::size_t>(i)].st, ev);
        if (!t) continue;
        World n = w;
        if (!enabled(n, i, *t, at)) continue;
        apply(n, i, *t, at);
        visit(std::move(n), at, Label{Label::Kind::event, static_cast<std::uint8_t>(i), ev});
      }
    }
    if (!w.crashed && w.crashes < kMaxCrashes) crashes(w, at);
    recover(w, at);
  }

  // Whether the move may happen now: the lane's seat free, the id table's
  // decision for a submission again, nothing before recovery after a crash.
  bool enabled(World& w, int i, const Transition& t, int at) {
    auto& d = w.d[static_cast<std::size_t>(i)];
    if (t.event == LifeEvent::seat_granted) return w.seat[d.lane] == -1;
    if (t.event != LifeEvent::submit || d.st == LifeState::unsubmitted) return true;
    if (d.attempt >= kMaxAttempts[i]) return false;
    const auto& again = id_table(d);
    if (again.action == seat::SameIdAgain::Action::replay || again.action == seat::SameIdAgain::Action::refuse) {
      return false;
    }
    if (again.attempt != d.attempt + 1) fail(at, "J4: the id table gave the wrong next attempt");
    d.cas = again.action == seat::SameIdAgain::Action::compare_and_swap;
    return true;
  }

  const seat::SameIdAgain& id_table(const Delivery& d) {
    std::string k(1, static_cast<char>(d.attempt));
    for (const auto& m : d.journal) k += {char(m.step), char(m.attempt), char(m.cause), char(m.flag), char(m.effect)};
    auto it = id_table_.find(k);
    if (it == id_table_.end()) it = id_table_.emplace(std::move(k), seat::same_id_again(record_of(d))).first;
    return it->second;
  }

  void journal_step(Delivery& d, Step s, const Transition& t) {
    Mark m{static_cast<std::uint8_t>(s), d.attempt, 0, 0, 0};
    if (s == Step::revoke_requested) {
      m.cause = static_cast<std::uint8_t>(cause_of(t.event).value_or(RevokeCause::caller));
      m.flag = claimed_state(t.from) ? 1 : 0;
    }
    d.journal.push_back(m);
  }

  void begin_attempt(Delivery& d) {
    d.posted_earlier = d.posts_total > 0;
    d.attempt++;
    d.posts_attempt = 0;
    d.answered = false;
    d.stop_cause = -1;
    if (d.attempt == 1) d.cas = false;
  }

  // The dispatch claim and the POST, checked as they happen.
  void check_effects(const Delivery& d, const Transition& t, int at) {
    if (t.event == LifeEvent::claim || t.event == LifeEvent::spawned) {
      if (final_cancellation_journalled(d)) fail(at, "J5: a journalled cancellation was followed by a dispatch");
      if (in_attempt(d, Step::revoke_requested) && t.event == LifeEvent::claim) {
        fail(at, "S5: a cancellation that won before the claim was followed by the claim");
      }
    }
    if (t.event == LifeEvent::post_cleared) {
      if (!in_attempt(d, Step::post_started)) fail(at, "J1: a POST began with no durable post_started");
      if (d.posted_earlier && !d.cas) fail(at, "J4: a second POST for an id that is not the compare-and-swap");
      if (d.posts_attempt > 0) fail(at, "J4: a second POST in one attempt");
    }
  }

  void write_outcome(Delivery& d, const Transition& t, int at) {
    if (in_attempt(d, Step::finished)) fail(at, "J5: a second writer of the outcome");
    auto kind = t.outcome;
    if (kind == OutcomeKind::revoked && d.stop_cause == kDeadlineCause) kind = OutcomeKind::deadline_killed;
    std::uint8_t revoked_by = 0;
    if (d.stop_cause >= 0 && d.stop_cause < kDeadlineCause) revoked_by = static_cast<std::uint8_t>(d.stop_cause + 1);
    if (const auto c = cause_of(t.event)) revoked_by = static_cast<std::uint8_t>(static_cast<int>(*c) + 1);
    RemoteEffect effect = RemoteEffect::none;
    if (t.claims == seat::Claims::journal && in_attempt(d, Step::post_started)) effect = RemoteEffect::possible;
    if (t.claims == seat::Claims::reported) effect = RemoteEffect::applied;
    if (effect == RemoteEffect::none && d.posts_attempt > 0) fail(at, "J2: none claimed after a POST");
    if (effect == RemoteEffect::applied && !d.answered) fail(at, "J2: applied claimed with no report read");
    d.journal.push_back(Mark{static_cast<std::uint8_t>(Step::finished), d.attempt, revoked_by,
                             static_cast<std::uint8_t>(kind), static_cast<std::uint8_t>(effect)});
  }

  void apply(World& w, int i, const Transition& t, int at, bool write_after = true) {
    auto& d = w.d[static_cast<std::size_t>(i)];
    if (t.event == LifeEvent::submit) begin_attempt(d);
    if (t.durable_before) journal_step(d, *t.durable_before, t);
    check_effects(d, t, at);
    if (t.event == LifeEvent::post_cleared) {
      ++d.posts_attempt;
      ++d.posts_total;
    }
    if (t.event == LifeEvent::result) d.answered = true;
    if (t.event == LifeEvent::spawned) d.child = true;
    // The stop is confirmed: by the child's exit, the kill's confirmation,
    // or recovery (which confirms a dead process's child gone, J3).
    if (t.event == LifeEvent::exit || t.event == LifeEvent::stop_confirmed || t.event == LifeEvent::recover) {
      d.child = false;
    }
    if (t.event == LifeEvent::seat_granted) w.seat[d.lane] = static_cast<std::int8_t>(i);
    if (t.to == LifeState::stopping && t.from != LifeState::stopping) {
      const auto c = cause_of(t.event);
      d.stop_cause = static_cast<std::int8_t>(c ? static_cast<int>(*c) : kDeadlineCause);
    }
    if (t.writer != seat::Writer::nobody) write_outcome(d, t, at);
    if (t.durable_after && write_after) journal_step(d, *t.durable_after, t);
    d.st = t.to;
    if (!holds_seat(d.st) && w.seat[d.lane] == i) w.seat[d.lane] = -1;
  }

  // The process dies: every unfinished delivery at once, between moves,
  // after a move's durable entry before the move, or after a move before
  // the entry it journals. Its seats go with it; nothing moves until
  // recovery.
  void crashes(const World& w, int at) {
    crash_from(w, at, Label{Label::Kind::crash});
    for (int i = 0; i < kDeliveries; ++i) {
      const auto from = w.d[static_cast<std::size_t>(i)].st;
      for (const auto& t : seat::lifecycle_table()) {
        if (t.from != from || t.event == LifeEvent::submit || t.event == LifeEvent::recover) continue;
        World n = w;
        if (!enabled(n, i, t, at)) continue;
        const auto who = static_cast<std::uint8_t>(i);
        if (t.durable_before) {
          World torn = n;
          journal_step(torn.d[static_cast<std::size_t>(i)], *t.durable_before, t);
          crash_from(std::move(torn), at, Label{Label::Kind::crash_after_entry, who, t.event, *t.durable_before});
        }
        if (t.durable_after) {
          apply(n, i, t, at, false);
          crash_from(std::move(n), at, Label{Label::Kind::crash_before_entry, who, t.event, *t.durable_after});
        }
      }
    }
  }

  void crash_from(World w, int at, const Label& label) {
    for (int i = 0; i < kDeliveries; ++i) {
      auto& d = w.d[static_cast<std::size_t>(i)];
      if (const auto t = seat::next(d.st, LifeEvent::crash)) {
        d.st = t->to;
        if (w.seat[d.lane] == i) w.seat[d.lane] = -1;
      }
    }
    w.crashed = true;
    w.crashes++;
    visit(std::move(w), at, label);
  }

  void recover(const World& w, int at) {
    World n = w;
    bool any = false;
    for (int i = 0; i < kDeliveries; ++i) {
      auto& d = n.d[static_cast<std::size_t>(i)];
      const auto t = seat::next(d.st, LifeEvent::recover);
      if (!t) continue;
      any = true;
      apply(n, i, *t, at);
    }
    if (!any) return;
    n.crashed = false;
    visit(std::move(n), at, Label{Label::Kind::recover});
  }
};

std::string file_text(const char* relative) {
  std::ifstream in(test::source_path(relative));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE(
    "S1 S5 J1 J2 J4 J5: every interleaving of the lifecycle table for three deliveries on two lanes keeps the rules") {
  Checker c;
  c.run();
  MESSAGE("measured: lifecycle model: " << c.states() << " states, " << c.transitions() << " transitions explored");
  CHECK_MESSAGE(c.violation().empty(), c.violation());
  CHECK(c.states() > 1000);  // the exploration reached past the first moves
}

TEST_CASE("S5: the lifecycle table has no dispatch after a cancellation and no move out of the ends but recovery's") {
  for (const auto& t : seat::lifecycle_table()) {
    if (t.from == LifeState::cancelled_seated) CHECK((t.to == LifeState::finished || t.to == LifeState::crashed));
    if (t.from == LifeState::finished) CHECK(t.event == LifeEvent::submit);
    if (t.event == LifeEvent::claim) CHECK(t.from == LifeState::seated);
  }
  CHECK(seat::next(LifeState::cancelled_seated, LifeEvent::claim) == std::nullopt);
  // One move per state and event: next() is a function of the table.
  const auto table = seat::lifecycle_table();
  for (std::size_t i = 0; i < table.size(); ++i) {
    for (std::size_t k = i + 1; k < table.size(); ++k) {
      CHECK_FALSE((table[i].from == table[k].from && table[i].event == table[k].event));
    }
  }
  CHECK(seat::next(LifeState::answered, LifeEvent::revoke_caller)->to == LifeState::answered_revoked);
  CHECK(seat::next(LifeState::answered_revoked, LifeEvent::revoke_shutdown) == std::nullopt);
}

// The claim word's values as lifecycle states: the word is the part of the
// machine that threads race on.
std::vector<LifeState> states_of(seat::ClaimWord w) {
  switch (w) {
    case seat::kQueued:
      return {LifeState::queued, LifeState::pending};
    case seat::kSeated:
      return {LifeState::seated};
    case seat::kClaimed:
      return {LifeState::claimed, LifeState::dispatched, LifeState::advertised, LifeState::post_started};
    case seat::kCancelledSeated:
      return {LifeState::cancelled_seated};
    case seat::kStopping:
      return {LifeState::stopping};
    case seat::kAnswered:
      return {LifeState::answered, LifeState::answered_revoked};
    case seat::kCancelled:
    case seat::kExpired:
    case seat::kRefused:
      return {LifeState::finished};
  }
  return {};
}

bool has(const std::vector<LifeState>& v, LifeState s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST_CASE("J5: every move of the executor's claim word is a move of the lifecycle table, by the same writer") {
  for (const auto& m : seat::kClaimMoves) {
    bool found = false;
    for (const auto& t : seat::lifecycle_table()) {
      if (!has(states_of(m.from), t.from) || !has(states_of(m.to), t.to)) continue;
      // The move writes the outcome itself, or leaves it to a later move of
      // the same writer (the seat's worker, after the seat is released).
      if (t.writer == m.writer || t.writer == seat::Writer::nobody) found = true;
    }
    CHECK_MESSAGE(found, "claim word move " << int(m.from) << " -> " << int(m.to) << " is not in the table");
  }
}

TEST_CASE("J5: docs/design.md shows the lifecycle table the code has") {
  const std::string doc = file_text("docs/design.md");
  const std::string begin = "<!-- lifecycle-table: begin (generated from src/seat/lifecycle.cpp) -->\n";
  const std::string end = "<!-- lifecycle-table: end -->";
  const auto b = doc.find(begin);
  const auto e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  const std::string shown = doc.substr(b + begin.size(), e - b - begin.size());
  CHECK_MESSAGE(shown == seat::lifecycle_markdown(),
                "docs/design.md's lifecycle table differs from the code; it should read:\n"
                    << seat::lifecycle_markdown());
}

}  // namespace unit_lifecycle
