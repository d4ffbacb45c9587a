// leases.hpp — lanes as leases in a database that several hosts share
// (rules L1 and L3; docs/design.md "Leases across hosts").
//
// On one host a lane is a flock (S1, S6). Across hosts it is also a row in
// PostgreSQL: the lease names its holder (host, service instance, delivery),
// carries a fencing token from one sequence (so it only grows, per lane
// too), and expires at `now() + ttl` by the database's clock. The holder
// renews it every ttl/3; another host takes it only after the expiry plus
// the margin (L3) or after a release (the holder's stop was confirmed).
//
// The database's clock decides expiry only for the other hosts. The holder
// itself goes by its own monotonic clock: its lease bound is the instant it
// *sent* the last confirmed acquisition or renewal, plus ttl, minus the
// margin (L1). A renewal sent at s cannot be applied before s, so the row's
// expiry is at least s + ttl by the database's clock, while the holder's
// kill fires at s + ttl − margin, and another host takes the lane no sooner
// than s + ttl + margin: a stop has 2 × margin to be confirmed, with clocks
// that may run at slightly different rates (docs/design.md states the
// assumption).
//
// One keeper per Executor: a thread with its own connection that LISTENs
// for releases, renews held leases and the instance's heartbeat; plus a
// second connection, under a mutex, for taking and releasing. No call
// waits on the database past the instant its caller gives.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "courier/result.hpp"
#include "sys/clock.hpp"

namespace courier::seat {

struct LeaseConfig {
  std::string conninfo;  // postgres:// URL (may hold a password: never printed; pg::Connection redacts it)
  std::string host;      // this host's name, as leases and the journal show it
  std::string instance;  // this executor: unique among every host's executors
  sys::MonoNs ttl = 0;
  sys::MonoNs margin = 0;
  // How long one statement may take when nothing tighter bounds it.
  sys::MonoNs statement_bound = 5'000'000'000;
  // The instant by which open() has its two connections (0: statement_bound
  // from the call): a server that accepts TCP and never answers costs no
  // more than the caller allowed.
  sys::MonoNs connect_until = 0;
};

struct LeaseHolder {
  std::string host;
  std::string instance;
  std::string delivery;
  std::int64_t fence = 0;
  // "host H, delivery D (fence F)": for pending events and reasons.
  std::string describe() const;
};

// A lane this executor holds.
struct Lease {
  std::string lane;
  std::int64_t fence = 0;
  sys::MonoNs bound = 0;  // L1: the send time of the acquisition + ttl − margin
};

// The lane is held elsewhere: by whom, and when (on this host's monotonic
// clock, estimated from the database's) it may be taken at the latest
// without a release: the expiry plus the margin.
struct LeaseHeld {
  LeaseHolder holder;
  sys::MonoNs free_at = 0;
};

class LeaseKeeper {
 public:
  struct Callbacks {
    // A release was announced for this lane (a waiter may try again).
    std::function<void(const std::string& lane)> released;
    // A renewal failed or found the lease gone: the delivery holding it must
    // be stopped now (L1). Called on the keeper thread; must not block.
    std::function<void(const std::string& lane, std::int64_t fence, const std::string& why)> lost;
    // A renewal was confirmed: the lease bound moves to `bound`.
    std::function<void(const std::string& lane, std::int64_t fence, sys::MonoNs bound)> renewed;
  };

  // Connects (twice), migrates the schema, registers the instance and starts
  // the keeper thread. Errors: database_failed, invalid_argument (a margin
  // that does not fit in the ttl).
  static Result<std::unique_ptr<LeaseKeeper>> open(LeaseConfig config, Callbacks callbacks);
  // Stops the keeper thread. Releases nothing: a lease still held (a
  // retained seat) expires by itself.
  ~LeaseKeeper();
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // Tries once to take the lane for `delivery` (L3): a lane with no lease,
  // a released one, or one past its expiry plus the margin by the
  // database's clock. Bounded by `until`. Errors: database_failed.
  Result<std::variant<Lease, LeaseHeld>> try_take(const std::string& lane, const std::string& delivery,
                                                  sys::MonoNs until);
  // Renews this lease every ttl/3 from now on (callbacks: renewed, lost).
  void keep(const Lease& lease);
  // Stops renewing it, and releases it when `release` (the stop was
  // confirmed, S2): the row is marked released and a NOTIFY names the lane.
  // A release that fails leaves the lease to expire. Errors: database_failed.
  Result<void> drop(const std::string& lane, std::int64_t fence, bool release);

  // Whether an instance of `host` has shown life within the ttl, by the
  // database's clock. Errors: database_failed.
  Result<bool> host_alive(const std::string& host);
  // Whether this lane has a lease that is neither released nor past its
  // expiry plus the margin. Errors: database_failed.
  Result<bool> lane_leased(const std::string& lane);

  const LeaseConfig& config() const;

  struct Impl;

 private:
  explicit LeaseKeeper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace courier::seat
