// leases.cpp — lanes as leases in PostgreSQL: take, renew, release, wait
// for a release (L1, L3). The statements are kept together at the top, as
// data: each one is the whole rule it enforces.
#include "sys/mutex.hpp"
#include "seat/leases.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "pg/connection.hpp"
#include "sys/events.hpp"
#include "sys/process.hpp"

namespace courier::seat {

namespace {

// The channel a release is announced on; the payload is the lane.
constexpr const char* kListen = "LISTEN courier_lane";

std::string ms_text(sys::MonoNs ns) { return std::to_string(ns / sys::kNsPerMs); }

// L3, in one place: the instant a lease may be taken without its holder's
// release is its expiry plus the margin, by the database's clock: the
// larger of this host's margin and the one the holder kills by. (The
// margin is this program's own number, not text from outside.)
std::string takeable_at(const char* row, sys::MonoNs margin) {
  return std::string("(") + row + "expires_at + interval '1 millisecond' * GREATEST(" + row + "margin_ms, " +
         ms_text(margin) + "))";
}

// The lane is taken when it has no lease, a released one, or one past the
// instant above. The fence comes from one sequence, so it grows for every
// lane. ($5: the ttl in ms.)
std::string take_statement(sys::MonoNs margin) {
  return "INSERT INTO courier_lease AS l (lane, fence, host, instance, delivery, expires_at, released, margin_ms) "
         "VALUES ($1, nextval('courier_fence'), $2, $3, $4, now() + $5::bigint * interval '1 millisecond', false, " +
         ms_text(margin) +
         ") ON CONFLICT (lane) DO UPDATE SET fence = nextval('courier_fence'), host = EXCLUDED.host, "
         "instance = EXCLUDED.instance, delivery = EXCLUDED.delivery, expires_at = EXCLUDED.expires_at, "
         "margin_ms = EXCLUDED.margin_ms, released = false WHERE l.released OR " +
         takeable_at("l.", margin) + " <= now() RETURNING l.fence";
}

// Who holds it, and how long until that instant (ms, by the database's
// clock; 0 when already past).
std::string holder_statement(sys::MonoNs margin) {
  return "SELECT host, instance, delivery, fence, released, GREATEST(0, CEIL(EXTRACT(EPOCH FROM (" +
         takeable_at("", margin) + " - now())) * 1000))::bigint FROM courier_lease WHERE lane = $1";
}

// Whether the lane is held: not released and not yet takeable by the
// holder's own margin (recovery reads the lease as its holder stated it).
std::string leased_statement() {
  return "SELECT count(*) FROM courier_lease WHERE lane = $1 AND NOT released AND " + takeable_at("", 0) + " > now()";
}

// A renewal moves the expiry only of a lease still ours and not yet
// expired by the database's clock: an expired one may be someone else's
// already, and is never revived.
constexpr const char* kRenew =
    "UPDATE courier_lease SET expires_at = now() + $3::bigint * interval '1 millisecond' "
    "WHERE lane = $1 AND fence = $2 AND NOT released AND expires_at > now() RETURNING fence";

// A release (after a confirmed stop) frees the lane at once and says so.
constexpr const char* kRelease =
    "WITH r AS (UPDATE courier_lease SET released = true WHERE lane = $1 AND fence = $2 AND NOT released "
    "RETURNING lane) SELECT pg_notify('courier_lane', lane) FROM r";

constexpr const char* kHeartbeat =
    "INSERT INTO courier_instance AS i (instance, host, pid, alive_until) "
    "VALUES ($1, $2, $3, now() + $4::bigint * interval '1 millisecond') "
    "ON CONFLICT (instance) DO UPDATE SET alive_until = EXCLUDED.alive_until";

constexpr const char* kHostAlive = "SELECT count(*) FROM courier_instance WHERE host = $1 AND alive_until > now()";

}  // namespace

std::string LeaseHolder::describe() const {
  return "host " + host + ", delivery " + delivery + " (fence " + std::to_string(fence) + ")";
}

struct Kept {
  std::int64_t fence = 0;
  sys::MonoNs bound = 0;     // L1: the last confirmed send + ttl − margin
  sys::MonoNs next_due = 0;  // the next renewal's send time
};

struct LeaseKeeper::Impl {
  LeaseConfig cfg;
  Callbacks cb;
  std::string take, holder, leased;  // the statements, with this margin
  sys::Mutex ops_mu;                 // the connection for taking and releasing
  std::optional<pg::Connection> ops COURIER_GUARDED_BY(ops_mu);
  // The leases the keeper renews.
  sys::Mutex mu;
  std::map<std::string, Kept> kept COURIER_GUARDED_BY(mu);
  bool stopping COURIER_GUARDED_BY(mu) = false;
  std::optional<sys::EventFd> wake;
  std::thread thread;
  std::optional<pg::Connection> listen;  // the keeper thread's own
  sys::MonoNs next_heartbeat = 0;

  pg::ConnectOptions connect_options(const char* role) const {
    pg::ConnectOptions o;
    o.conninfo = cfg.conninfo;
    o.application_name = "git-courier/" + cfg.host + "/" + cfg.instance + "/" + role;  // as the executor's journal
    return o;
  }

  // Under ops_mu: the connection for taking and releasing, made again when
  // it was lost. Errors: database_failed.
  Result<pg::Connection*> ops_connection(sys::MonoNs until) COURIER_REQUIRES(ops_mu) {
    if (ops && !ops->broken()) return &*ops;
    ops.reset();
    auto c = pg::Connection::open(connect_options("ops"), until);
    if (!c) return tl::unexpected(c.error());
    ops = std::move(*c);
    return &*ops;
  }

  Result<pg::Rows> run(const char* sql, const std::vector<std::optional<std::string>>& params, sys::MonoNs until) {
    sys::MutexLock lock(ops_mu);
    auto c = ops_connection(until);
    if (!c) return tl::unexpected(c.error());
    return (*c)->exec(sql, params, until);
  }

  sys::MonoNs bounded(sys::MonoNs until) const { return std::min(until, sys::mono_now_ns() + cfg.statement_bound); }

  // The keeper thread's connection: LISTENing, for renewals and the
  // heartbeat. Errors: database_failed.
  Result<pg::Connection*> listen_connection(sys::MonoNs until) {
    if (listen && !listen->broken()) return &*listen;
    listen.reset();
    auto c = pg::Connection::open(connect_options("keeper"), until);
    if (!c) return tl::unexpected(c.error());
    if (auto l = c->exec(kListen, {}, until); !l) return tl::unexpected(l.error());
    listen = std::move(*c);
    // Releases announced while no one listened are not replayed: waiters
    // also wake at the holder's expiry plus the margin, and try again.
    return &*listen;
  }

  Result<void> heartbeat(sys::MonoNs until) {
    auto c = listen_connection(until);
    if (!c) return tl::unexpected(c.error());
    auto r = (*c)->exec(kHeartbeat, {cfg.instance, cfg.host, std::to_string(sys::self_pid()), ms_text(cfg.ttl)}, until);
    if (!r) return tl::unexpected(r.error());
    return {};
  }

  // One renewal (L1): sent now, bounded by the lease bound (past it the
  // kill has fired anyway). Confirmed: the bound moves to the send time +
  // ttl − margin. Anything else: the lease is lost.
  void renew(const std::string& lane, Kept k) {
    const sys::MonoNs sent = sys::mono_now_ns();
    std::string why;
    if (sent >= k.bound) {
      why = "the lease bound passed before a renewal could be sent";
    } else if (auto c = listen_connection(k.bound); !c) {
      why = "cannot reach the database to renew the lease: " + c.error().message;
    } else if (auto r = (*c)->exec(kRenew, {lane, std::to_string(k.fence), ms_text(cfg.ttl)}, k.bound); !r) {
      why = "the lease's renewal failed: " + r.error().message;
    } else if (r->rows.empty()) {
      why = "the lease is no longer ours (expired by the database's clock, or taken)";
    }
    const sys::MonoNs bound = sent + cfg.ttl - cfg.margin;
    {
      sys::MutexLock lock(mu);
      auto it = kept.find(lane);
      if (it == kept.end() || it->second.fence != k.fence) return;  // dropped meanwhile
      if (!why.empty()) {
        kept.erase(it);
      } else {
        it->second.bound = std::max(it->second.bound, bound);
        it->second.next_due = sent + cfg.ttl / 3;
      }
    }
    if (!why.empty()) {
      if (cb.lost) cb.lost(lane, k.fence, why);
    } else if (cb.renewed) {
      cb.renewed(lane, k.fence, bound);
    }
  }

  void run_keeper() {
    for (;;) {
      std::vector<std::pair<std::string, Kept>> due;
      sys::MonoNs next = next_heartbeat;
      {
        sys::MutexLock lock(mu);
        if (stopping) return;
        const sys::MonoNs now = sys::mono_now_ns();
        for (const auto& [lane, k] : kept) {
          if (k.next_due <= now) {
            due.emplace_back(lane, k);
          } else {
            next = std::min(next, k.next_due);
          }
        }
      }
      for (const auto& [lane, k] : due) renew(lane, k);
      if (!due.empty()) continue;  // look again: new ones may be due
      if (sys::mono_now_ns() >= next_heartbeat) {
        (void)heartbeat(bounded(sys::kForever));  // a missed heartbeat only makes this host look gone sooner
        next_heartbeat = sys::mono_now_ns() + cfg.ttl / 3;
        continue;
      }
      std::vector<int> fds = {wake->fd()};
      if (auto c = listen_connection(bounded(next)); c) fds.push_back((*c)->socket());
      auto ready = sys::wait_readable_until(fds, next);
      wake->drain();
      if (!listen || listen->broken()) continue;
      auto notes = listen->take_notifications();
      if (!notes) continue;
      for (const auto& n : *notes) {
        if (cb.released) cb.released(n.payload);
      }
    }
  }
};

Result<std::unique_ptr<LeaseKeeper>> LeaseKeeper::open(LeaseConfig config, Callbacks callbacks) {
  if (config.ttl <= 0 || config.margin < 0 || config.margin * 3 >= config.ttl * 2) {
    return fail(Errc::invalid_argument,
                "the lease's margin must be shorter than two thirds of its ttl (renewals are sent every ttl/3)");
  }
  auto impl = std::make_unique<Impl>();
  impl->cfg = std::move(config);
  impl->cb = std::move(callbacks);
  impl->take = take_statement(impl->cfg.margin);
  impl->holder = holder_statement(impl->cfg.margin);
  impl->leased = leased_statement();
  auto wake = sys::EventFd::create();
  if (!wake) return tl::unexpected(wake.error());
  impl->wake = std::move(*wake);
  const sys::MonoNs until = sys::mono_now_ns() + impl->cfg.statement_bound;
  const sys::MonoNs connect = impl->cfg.connect_until > 0 ? std::min(until, impl->cfg.connect_until) : until;
  {
    sys::MutexLock lock(impl->ops_mu);
    auto c = impl->ops_connection(connect);
    if (!c) return tl::unexpected(c.error());
    if (auto m = pg::migrate(**c, until); !m) return tl::unexpected(m.error());
  }
  if (auto l = impl->listen_connection(connect); !l) return tl::unexpected(l.error());
  if (auto h = impl->heartbeat(until); !h) return tl::unexpected(h.error());
  impl->next_heartbeat = sys::mono_now_ns() + impl->cfg.ttl / 3;
  std::unique_ptr<LeaseKeeper> k(new LeaseKeeper(std::move(impl)));
  k->impl_->thread = std::thread([p = k->impl_.get()] { p->run_keeper(); });
  return k;
}

LeaseKeeper::LeaseKeeper(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LeaseKeeper::~LeaseKeeper() {
  {
    sys::MutexLock lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->wake->signal();
  if (impl_->thread.joinable()) impl_->thread.join();
}

const LeaseConfig& LeaseKeeper::config() const { return impl_->cfg; }

Result<std::variant<Lease, LeaseHeld>> LeaseKeeper::try_take(const std::string& lane, const std::string& delivery,
                                                             sys::MonoNs until) {
  const sys::MonoNs bound = impl_->bounded(until);
  const LeaseConfig& c = impl_->cfg;
  const sys::MonoNs sent = sys::mono_now_ns();
  auto taken = impl_->run(impl_->take.c_str(), {lane, c.host, c.instance, delivery, ms_text(c.ttl)}, bound);
  if (!taken) return tl::unexpected(taken.error());
  if (!taken->rows.empty() && taken->rows[0].size() == 1 && taken->rows[0][0]) {
    Lease l;
    l.lane = lane;
    l.fence = std::stoll(*taken->rows[0][0]);
    l.bound = sent + c.ttl - c.margin;
    return l;
  }
  const sys::MonoNs asked = sys::mono_now_ns();
  auto who = impl_->run(impl_->holder.c_str(), {lane}, bound);
  if (!who) return tl::unexpected(who.error());
  LeaseHeld held;
  if (who->rows.empty() || who->rows[0].size() != 6) {
    held.free_at = asked;  // gone meanwhile: try again now
    return held;
  }
  const auto& row = who->rows[0];
  held.holder.host = row[0].value_or("");
  held.holder.instance = row[1].value_or("");
  held.holder.delivery = row[2].value_or("");
  held.holder.fence = row[3] ? std::stoll(*row[3]) : 0;
  const bool released = row[4] && *row[4] == "t";
  const std::int64_t wait_ms = row[5] ? std::stoll(*row[5]) : 0;
  held.free_at = released ? asked : sys::mono_after_ms(asked, wait_ms);
  return held;
}

void LeaseKeeper::keep(const Lease& lease) {
  {
    sys::MutexLock lock(impl_->mu);
    Kept k;
    k.fence = lease.fence;
    k.bound = lease.bound;
    k.next_due = lease.bound - impl_->cfg.ttl + impl_->cfg.margin + impl_->cfg.ttl / 3;
    impl_->kept[lease.lane] = k;
  }
  impl_->wake->signal();
}

Result<void> LeaseKeeper::drop(const std::string& lane, std::int64_t fence, bool release) {
  {
    sys::MutexLock lock(impl_->mu);
    auto it = impl_->kept.find(lane);
    if (it != impl_->kept.end() && it->second.fence == fence) impl_->kept.erase(it);
  }
  if (!release) return {};
  auto r = impl_->run(kRelease, {lane, std::to_string(fence)}, impl_->bounded(sys::kForever));
  if (!r) return tl::unexpected(r.error());
  return {};
}

Result<bool> LeaseKeeper::host_alive(const std::string& host) {
  auto r = impl_->run(kHostAlive, {host}, impl_->bounded(sys::kForever));
  if (!r) return tl::unexpected(r.error());
  return !r->rows.empty() && r->rows[0].size() == 1 && r->rows[0][0] && *r->rows[0][0] != "0";
}

Result<bool> LeaseKeeper::lane_leased(const std::string& lane) {
  auto r = impl_->run(impl_->leased.c_str(), {lane}, impl_->bounded(sys::kForever));
  if (!r) return tl::unexpected(r.error());
  return !r->rows.empty() && r->rows[0].size() == 1 && r->rows[0][0] && *r->rows[0][0] != "0";
}

}  // namespace courier::seat
